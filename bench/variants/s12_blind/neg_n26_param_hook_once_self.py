"""Frozen-subnetwork fine-tuning: gradients are masked by a fixed buffer."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, keep: float = 0.1) -> None:
        super().__init__(in_features, out_features)
        self.register_buffer("grad_mask", (torch.rand_like(self.weight) < keep).float())
        # registered exactly once; reads the buffer through self so it follows .to()/.cuda()
        self.weight.register_hook(lambda g: g * self.grad_mask)

    def refresh_mask(self, keep: float) -> None:
        with torch.no_grad():
            self.grad_mask.copy_((torch.rand_like(self.weight) < keep).float())


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = MaskedLinear(1024, 1024)
        self.fc2 = MaskedLinear(1024, 10)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def finetune(model: Net, loader, epochs: int = 3, lr: float = 1e-4) -> None:
    model = model.cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for m in model.modules():
            if isinstance(m, MaskedLinear):
                m.refresh_mask(keep=0.1)
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
