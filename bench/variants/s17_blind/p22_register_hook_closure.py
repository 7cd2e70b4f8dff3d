import torch
import torch.nn as nn


def magnitude_mask(weight: torch.Tensor, sparsity: float) -> torch.Tensor:
    k = int(weight.numel() * sparsity)
    if k == 0:
        return torch.ones_like(weight)
    thresh = weight.abs().flatten().kthvalue(k).values
    return (weight.abs() > thresh).float()


class PrunedTrainer:
    def __init__(self, model: nn.Module, sparsity_schedule, lr=0.1):
        self.model = model
        self.schedule = sparsity_schedule
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)

    def _prunable(self):
        for name, p in self.model.named_parameters():
            if p.dim() > 1 and "weight" in name:
                yield name, p

    def apply_masks(self, sparsity):
        for name, p in self._prunable():
            mask = magnitude_mask(p.detach(), sparsity)
            with torch.no_grad():
                p.mul_(mask)
            p.register_hook(lambda grad, m=mask: grad * m)  # leak

    def step(self, x, y, it):
        self.apply_masks(self.schedule(it))
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def cubic_schedule(final=0.9, start_it=1000, end_it=20000):
    def f(it):
        if it < start_it:
            return 0.0
        t = min(1.0, (it - start_it) / (end_it - start_it))
        return final * (1 - (1 - t) ** 3)
    return f


def main(model, loader, iters=30000):
    model = model.cuda()
    trainer = PrunedTrainer(model, cubic_schedule())
    it = 0
    while it < iters:
        for x, y in loader:
            loss = trainer.step(x.cuda(), y.cuda(), it)
            if it % 500 == 0:
                print(it, loss)
            it += 1
