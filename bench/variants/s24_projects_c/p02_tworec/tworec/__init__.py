"""Two-tower retrieval model with an mmengine-style runner."""
