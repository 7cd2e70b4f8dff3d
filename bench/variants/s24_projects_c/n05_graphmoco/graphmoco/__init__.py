"""Momentum-contrast pre-training for molecular graphs (GIN encoder), with accelerate."""
from .queue import MemoryQueue, momentum_update

__all__ = ["MemoryQueue", "momentum_update"]
