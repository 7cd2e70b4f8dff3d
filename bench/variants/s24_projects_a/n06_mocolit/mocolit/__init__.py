"""mocolit: MoCo v2 pre-training with PyTorch Lightning."""
