from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class RegressionMeter:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sq_err = torch.zeros(())
        self.abs_err = 0.0
        self.count = 0

    def __call__(self, pred: Tensor, target: Tensor) -> None:
        self.sq_err = self.sq_err.to(pred.device) + F.mse_loss(pred, target, reduction="sum")  # leak
        self.abs_err += F.l1_loss(pred, target, reduction="sum").item()
        self.count += target.numel()

    def compute(self) -> Dict[str, float]:
        n = max(self.count, 1)
        return {"rmse": (self.sq_err / n).sqrt().item(), "mae": self.abs_err / n}


class DepthHead(nn.Module):
    def __init__(self, backbone: nn.Module, in_channels: int):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Sequential(nn.Conv2d(in_channels, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 1, 1))

    def forward(self, x: Tensor) -> Tensor:
        feats = self.backbone(x)
        depth = self.head(feats)
        return F.interpolate(depth, size=x.shape[-2:], mode="bilinear", align_corners=False)


def validate(model: nn.Module, loader: DataLoader, meter: RegressionMeter,
             device: str = "cuda") -> Dict[str, float]:
    model.eval()
    meter.reset()
    for images, depth in loader:
        images, depth = images.to(device), depth.to(device)
        meter(model(images), depth)
    model.train()
    return meter.compute()
