"""litseg: semantic segmentation with PyTorch Lightning.

Public helpers are re-exported here so downstream code can simply do
``from litseg import RunningMean, DiceCELoss``.
"""
from .metrics import *  # noqa: F401,F403
from .losses import DiceCELoss, dice_loss  # noqa: F401

__version__ = "0.5.0"
