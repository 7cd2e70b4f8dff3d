import functools
from typing import Dict

import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class SegNet(nn.Module):
    def __init__(self, n_classes=21):
        super().__init__()
        self.enc1 = ConvBlock(3, 64)
        self.enc2 = ConvBlock(64, 128)
        self.dec = ConvBlock(128, 64)
        self.cls = nn.Conv2d(64, n_classes, 1)

    def forward(self, x):
        x = self.enc1(x)
        x = self.enc2(nn.functional.max_pool2d(x, 2))
        x = nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return self.cls(self.dec(x))


def _stat_hook(store: Dict[str, torch.Tensor], key: str, module, inp, out):
    # per-channel mean activation, used later for channel pruning scores
    m = out.detach().mean(dim=(0, 2, 3))
    store[key] = m if key not in store else store[key] + m


@torch.no_grad()
def channel_importance(model: nn.Module, calib_loader, device):
    store: Dict[str, torch.Tensor] = {}
    handles = []
    for name, m in model.named_modules():
        if isinstance(m, ConvBlock):
            handles.append(m.register_forward_hook(functools.partial(_stat_hook, store, name)))
    try:
        model.eval()
        for img, _ in calib_loader:
            model(img.to(device))
    finally:
        for h in handles:
            h.remove()
    return {k: (v / len(calib_loader)).cpu() for k, v in store.items()}


def train_segmentation(model, loader, cfg):
    dev = torch.device(cfg["device"])
    model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
    for epoch in range(cfg["epochs"]):
        model.train()
        for img, mask in loader:
            img, mask = img.to(dev), mask.to(dev)
            logits = model(img)
            loss = nn.functional.cross_entropy(logits, mask, ignore_index=255)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())
    return channel_importance(model, loader, dev)


if __name__ == "__main__":
    cfg = {"device": "cuda", "lr": 0.01, "epochs": 30}
    data = [(torch.randn(4, 3, 64, 64), torch.randint(0, 21, (4, 64, 64))) for _ in range(10)]
    train_segmentation(SegNet(), data, cfg)
