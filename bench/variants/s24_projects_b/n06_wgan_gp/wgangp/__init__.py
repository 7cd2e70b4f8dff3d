"""WGAN-GP on CIFAR-10 / LSUN."""
