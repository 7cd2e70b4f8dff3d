"""facegan: a small DCGAN for 64x64 face crops."""

__version__ = "0.3.1"
