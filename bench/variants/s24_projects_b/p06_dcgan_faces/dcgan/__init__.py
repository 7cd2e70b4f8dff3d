"""DCGAN on aligned face crops."""
