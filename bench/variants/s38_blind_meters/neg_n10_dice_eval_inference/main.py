import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from engine import evaluate, train_one_epoch


class RandomMasks(Dataset):
    def __init__(self, n, size=128):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        img = torch.randn(3, self.size, self.size, generator=g)
        mask = (img.mean(0, keepdim=True) > 0).float()
        return img, mask


def double_conv(ci, co):
    return nn.Sequential(
        nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
        nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
    )


class MiniUNet(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.inc = double_conv(3, c)
        self.down1 = nn.Sequential(nn.MaxPool2d(2), double_conv(c, 2 * c))
        self.down2 = nn.Sequential(nn.MaxPool2d(2), double_conv(2 * c, 4 * c))
        self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.conv1 = double_conv(4 * c, 2 * c)
        self.up2 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.conv2 = double_conv(2 * c, c)
        self.outc = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        y = self.conv1(torch.cat([self.up1(x3), x2], dim=1))
        y = self.conv2(torch.cat([self.up2(y), x1], dim=1))
        return self.outc(y)


def get_args():
    parser = argparse.ArgumentParser(description="UNet segmentation")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--workers", type=int, default=4)
    return parser.parse_args()


def main():
    args = get_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(RandomMasks(4000), batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, pin_memory=True)
    val_loader = DataLoader(RandomMasks(800), batch_size=args.batch_size, num_workers=args.workers)

    model = MiniUNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=5)
    grad_scaler = torch.cuda.amp.GradScaler(enabled=device.type == "cuda")

    best = 0.0
    for epoch in range(args.epochs):
        train_one_epoch(model, optimizer, train_loader, device, epoch, grad_scaler)
        val_dice, val_loss = evaluate(model, val_loader, device)
        scheduler.step(val_dice)
        print(f"epoch {epoch}: val dice {val_dice:.4f}  val loss {val_loss:.4f}")
        if val_dice > best:
            best = val_dice
            torch.save(model.state_dict(), "unet_best.pth")


if __name__ == "__main__":
    main()
