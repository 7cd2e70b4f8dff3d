"""simclr: SimCLR pre-training on CIFAR-10 with a tiny experiment logger."""
