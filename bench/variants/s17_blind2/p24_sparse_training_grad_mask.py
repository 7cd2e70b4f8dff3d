"""Dynamic sparse training (magnitude prune / gradient regrow) with gradient masking."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SparseMasker:
    def __init__(self, model, density=0.1, update_every=100, drop_fraction=0.3, total_steps=100_000):
        self.model = model
        self.density = density
        self.update_every = update_every
        self.drop_fraction = drop_fraction
        self.total_steps = total_steps
        self.params = {n: p for n, p in model.named_parameters() if p.dim() in (2, 4)}
        self.masks = {n: self._random_mask(p) for n, p in self.params.items()}
        self.apply_masks()

    def _random_mask(self, p):
        return (torch.rand_like(p) < self.density).float()

    @torch.no_grad()
    def apply_masks(self):
        for n, p in self.params.items():
            p.mul_(self.masks[n])

    def _drop_rate(self, step):
        return self.drop_fraction / 2 * (1 + math.cos(math.pi * step / self.total_steps))

    @torch.no_grad()
    def _prune_and_regrow(self, step):
        rate = self._drop_rate(step)
        for n, p in self.params.items():
            mask = self.masks[n]
            n_active = int(mask.sum().item())
            n_swap = int(rate * n_active)
            score_drop = torch.where(mask.bool(), p.abs(), torch.full_like(p, float("inf")))
            drop_idx = torch.topk(score_drop.flatten(), n_swap, largest=False).indices
            grad = p.grad if p.grad is not None else torch.zeros_like(p)
            score_grow = torch.where(mask.bool(), torch.full_like(p, -float("inf")), grad.abs())
            grow_idx = torch.topk(score_grow.flatten(), n_swap).indices
            new_mask = mask.clone().flatten()
            new_mask[drop_idx] = 0.0
            new_mask[grow_idx] = 1.0
            self.masks[n] = new_mask.view_as(mask)

    def _register_grad_masks(self):
        for n, p in self.params.items():
            mask = self.masks[n]
            p.register_hook(lambda g, mask=mask: g * mask)  # leak

    def step(self, step):
        if step > 0 and step % self.update_every == 0 and step < 0.75 * self.total_steps:
            self._prune_and_regrow(step)
            self._register_grad_masks()
        self.apply_masks()


def train(model, loader, total_steps=100_000, device="cuda"):
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    masker = SparseMasker(model, total_steps=total_steps)
    step = 0
    while step < total_steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            masker.step(step)
            opt.step()
            masker.apply_masks()
            step += 1
            if step % 500 == 0:
                print(f"step {step} loss {loss.item():.4f}")
            if step >= total_steps:
                return model
    return model
