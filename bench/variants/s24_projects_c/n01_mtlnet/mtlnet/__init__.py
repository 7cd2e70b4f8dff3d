"""Multi-task dense prediction (segmentation + depth + normals) on NYUv2."""
from .balancing import *  # noqa: F401,F403
from .heads import MultiTaskNet

__all__ = ["MultiTaskNet", "DynamicWeightAverage", "UncertaintyWeighting", "TaskLossTracker"]
