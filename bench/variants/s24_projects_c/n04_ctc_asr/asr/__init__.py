"""Conformer-CTC fine-tuning with the Hugging Face Trainer."""
