"""Response- and feature-based knowledge distillation for ImageNet-style classifiers."""
