"""Graph convolutional networks for molecular property prediction (no PyG needed)."""
