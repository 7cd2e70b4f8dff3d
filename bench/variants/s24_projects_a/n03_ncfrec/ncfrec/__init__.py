"""ncfrec: Neural Collaborative Filtering (He et al., 2017) on MovieLens."""
from .meters import *  # noqa: F401,F403
from .model import NeuMF

__version__ = "0.2.0"
