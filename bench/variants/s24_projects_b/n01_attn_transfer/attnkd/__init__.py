"""Attention-transfer distillation (Zagoruyko & Komodakis) for CNN classifiers."""
