"""Encoder with deep supervision: every stage emits auxiliary logits."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Stage(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        )
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(self.conv(x))


class DeeplySupervisedNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), num_classes: int = 10) -> None:
        super().__init__()
        chans = (3, *widths)
        self.stages = nn.ModuleList(Stage(a, b) for a, b in zip(chans[:-1], chans[1:]))
        self.aux_heads = nn.ModuleList(nn.Linear(w, num_classes) for w in widths)
        self.aux_outputs: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.aux_outputs = []
        for stage, head in zip(self.stages, self.aux_heads):
            x = stage(x)
            self.aux_outputs.append(head(F.adaptive_avg_pool2d(x, 1).flatten(1)))
        return self.aux_outputs[-1]


def deep_supervision_loss(model: DeeplySupervisedNet, target: torch.Tensor, decay: float = 0.5) -> torch.Tensor:
    n = len(model.aux_outputs)
    weights = [decay ** (n - 1 - i) for i in range(n)]
    return sum(w * F.cross_entropy(o, target) for w, o in zip(weights, model.aux_outputs)) / sum(weights)


def train(model: DeeplySupervisedNet, loader, epochs: int = 30) -> None:
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            model(x)
            loss = deep_supervision_loss(model, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
