import torch
import torch.nn as nn


class ActivationRecorder:
    """Callable hook object used to monitor dead ReLUs in an MLP."""

    def __init__(self, name: str):
        self.name = name
        self.outputs: list[torch.Tensor] = []

    def __call__(self, module: nn.Module, inputs, output: torch.Tensor) -> None:
        self.outputs.append(output.detach().clone())  # leak

    def dead_fraction(self) -> float:
        if not self.outputs:
            return 0.0
        last = self.outputs[-1]
        return (last <= 0).float().mean().item()


class MLP(nn.Module):
    def __init__(self, sizes=(784, 512, 256, 10)):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x.flatten(1))


def attach_recorders(model: nn.Module) -> dict[str, ActivationRecorder]:
    recs = {}
    for name, mod in model.named_modules():
        if isinstance(mod, nn.ReLU):
            rec = ActivationRecorder(name)
            mod.register_forward_hook(rec)
            recs[name] = rec
    return recs


def fit(model, loader, epochs: int = 10):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    recorders = attach_recorders(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    crit = nn.CrossEntropyLoss()
    for ep in range(epochs):
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            loss = crit(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if i % 100 == 0:
                dead = {k: r.dead_fraction() for k, r in recorders.items()}
                print(f"ep={ep} it={i} loss={loss.item():.3f} dead={dead}")
