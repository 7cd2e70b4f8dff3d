"""Shared ResNet encoder with per-task decoders."""
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Decoder(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, mid: int = 256):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(True),
            nn.Conv2d(mid, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(True),
            nn.Conv2d(mid, out_ch, 1),
        )

    def forward(self, x, size):
        return F.interpolate(self.block(x), size=size, mode="bilinear", align_corners=False)


class MultiTaskNet(nn.Module):
    def __init__(self, n_classes: int = 13, pretrained: bool = True):
        super().__init__()
        r = torchvision.models.resnet50(weights="IMAGENET1K_V2" if pretrained else None,
                                        replace_stride_with_dilation=[False, True, True])
        self.encoder = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2, r.layer3, r.layer4)
        self.heads = nn.ModuleDict({
            "seg": Decoder(2048, n_classes),
            "depth": Decoder(2048, 1),
            "normal": Decoder(2048, 3),
        })

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        feat = self.encoder(x)
        size = x.shape[-2:]
        out = {k: h(feat, size) for k, h in self.heads.items()}
        out["normal"] = F.normalize(out["normal"], dim=1)
        return out


def task_losses(pred: Dict[str, torch.Tensor], batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    valid = (batch["depth"] > 0).float()
    depth = (torch.abs(pred["depth"] - batch["depth"]) * valid).sum() / valid.sum().clamp_min(1.0)
    normal_valid = (batch["normal"].abs().sum(1, keepdim=True) > 0).float()
    cos = (pred["normal"] * batch["normal"]).sum(1, keepdim=True)
    normal = ((1 - cos) * normal_valid).sum() / normal_valid.sum().clamp_min(1.0)
    return {
        "seg": F.cross_entropy(pred["seg"], batch["seg"], ignore_index=255),
        "depth": depth,
        "normal": normal,
    }
