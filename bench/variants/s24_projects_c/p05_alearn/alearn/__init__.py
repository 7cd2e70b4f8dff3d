"""Pool-based active learning for image classification."""
