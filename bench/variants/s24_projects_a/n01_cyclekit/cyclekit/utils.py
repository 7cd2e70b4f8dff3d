"""Image history pool and misc helpers."""
import random

import torch


class ImagePool:
    """Buffer of previously generated images (Shrivastava et al., 2017).

    Holds at most ``pool_size`` detached images; once full, each query swaps an
    incoming image with a random stored one half of the time.
    """

    def __init__(self, pool_size: int = 50):
        self.pool_size = pool_size
        self.images = []

    def query(self, images: torch.Tensor) -> torch.Tensor:
        if self.pool_size == 0:
            return images
        out = []
        for image in images.detach():
            image = image.unsqueeze(0)
            if len(self.images) < self.pool_size:
                self.images.append(image)
                out.append(image)
            elif random.random() > 0.5:
                idx = random.randint(0, self.pool_size - 1)
                out.append(self.images[idx].clone())
                self.images[idx] = image
            else:
                out.append(image)
        return torch.cat(out, 0)


def set_requires_grad(nets, flag: bool) -> None:
    if not isinstance(nets, (list, tuple)):
        nets = [nets]
    for net in nets:
        for p in net.parameters():
            p.requires_grad_(flag)


def linear_decay(epoch: int, n_epochs: int, n_decay: int) -> float:
    return 1.0 - max(0, epoch - n_epochs) / float(n_decay + 1)


def tensor2im(t: torch.Tensor):
    return ((t.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).permute(1, 2, 0).cpu().numpy()
