"""Feature-level knowledge distillation for image classifiers."""

__version__ = "0.3.1"
