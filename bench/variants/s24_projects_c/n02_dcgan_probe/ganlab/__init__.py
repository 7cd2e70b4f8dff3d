"""DCGAN/hinge-GAN training with activation probes."""
