"""cyclekit: unpaired image-to-image translation (CycleGAN)."""
