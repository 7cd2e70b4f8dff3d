"""Sequence classification fine-tuning scripts."""
