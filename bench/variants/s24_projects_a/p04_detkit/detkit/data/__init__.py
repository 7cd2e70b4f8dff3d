"""Dataset and loader construction."""
from .dataset import VOCDetection, build_loader

__all__ = ["VOCDetection", "build_loader"]
