"""ppolab: compact PPO implementation for gymnasium control tasks."""
