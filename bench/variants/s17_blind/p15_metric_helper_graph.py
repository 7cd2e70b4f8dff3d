import numpy as np
import torch
from torch import nn


def mae(pred, target):
    return (pred - target).abs().mean()


def rmse(pred, target):
    return torch.sqrt(((pred - target) ** 2).mean()).item()


class DepthHead(nn.Module):
    def __init__(self, backbone, feat_ch=256):
        super().__init__()
        self.backbone = backbone
        self.up = nn.Sequential(
            nn.ConvTranspose2d(feat_ch, 128, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(64, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.up(self.backbone(x)).squeeze(1)


def train_depth(model, loader, optimizer, epochs, device):
    for epoch in range(epochs):
        epoch_mae = []
        epoch_rmse = []
        model.train()
        for rgb, depth in loader:
            rgb, depth = rgb.to(device), depth.to(device)
            pred = model(rgb)
            valid = depth > 0
            loss = nn.functional.smooth_l1_loss(pred[valid], depth[valid])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_mae.append(mae(pred[valid], depth[valid]))  # leak
            epoch_rmse.append(rmse(pred[valid].detach(), depth[valid]))
        print(
            f"epoch {epoch}: MAE={torch.stack(epoch_mae).mean().item():.3f} "
            f"RMSE={np.mean(epoch_rmse):.3f}"
        )
