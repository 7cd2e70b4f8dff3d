"""Gradient-flow debugging: record output statistics from every transformer block."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class OutputRecorder:
    layer_name: str
    outputs: list = field(default_factory=list)

    def __call__(self, module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        if isinstance(output, tuple):
            output = output[0]
        self.outputs.append(output.norm(dim=-1))  # leak

    def mean_norm(self) -> float:
        if not self.outputs:
            return 0.0
        return torch.cat([o.flatten() for o in self.outputs]).mean().item()


def attach_recorders(model: nn.Module) -> dict[str, OutputRecorder]:
    recorders = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.TransformerEncoderLayer):
            rec = OutputRecorder(name)
            module.register_forward_hook(rec)
            recorders[name] = rec
    return recorders


def build_model(d_model: int = 512, nhead: int = 8, num_layers: int = 6) -> nn.Module:
    layer = nn.TransformerEncoderLayer(d_model, nhead, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers)


def train(loader, steps: int = 10_000) -> None:
    model = build_model().cuda()
    recorders = attach_recorders(model)
    head = nn.Linear(512, 1).cuda()
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
    it = iter(loader)
    for step in range(steps):
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(loader)
            x, y = next(it)
        pred = head(model(x.cuda())).squeeze(-1).mean(1)
        loss = nn.functional.mse_loss(pred, y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 500 == 0:
            for name, rec in recorders.items():
                print(f"{step} {name}: {rec.mean_norm():.3f}")
