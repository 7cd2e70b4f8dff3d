from .base import BaseAgent
from .ppo import PPOAgent

__all__ = ["BaseAgent", "PPOAgent"]
