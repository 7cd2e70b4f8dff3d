import os
import time
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SliceDataset(Dataset):
    """2-D slices stored as <case>_img.npy / <case>_mask.npy pairs."""

    def __init__(self, root, split="train"):
        self.root = os.path.join(root, split)
        self.cases = sorted(f[:-8] for f in os.listdir(self.root) if f.endswith("_img.npy"))

    def __len__(self):
        return len(self.cases)

    def __getitem__(self, idx):
        name = self.cases[idx]
        img = np.load(os.path.join(self.root, name + "_img.npy")).astype(np.float32)
        mask = np.load(os.path.join(self.root, name + "_mask.npy")).astype(np.int64)
        img = (img - img.mean()) / (img.std() + 1e-6)
        return torch.from_numpy(img)[None], torch.from_numpy(mask)


def soft_dice(probs, target, num_classes, eps=1e-5):
    onehot = F.one_hot(target, num_classes).permute(0, 3, 1, 2).float()
    dims = (0, 2, 3)
    inter = (probs * onehot).sum(dims)
    denom = probs.sum(dims) + onehot.sum(dims)
    return ((2 * inter + eps) / (denom + eps))[1:].mean()


class DiceCELoss(nn.Module):
    def __init__(self, num_classes, dice_weight=1.0):
        super().__init__()
        self.num_classes = num_classes
        self.dice_weight = dice_weight

    def forward(self, logits, target):
        ce = F.cross_entropy(logits, target)
        dice = soft_dice(logits.softmax(1), target, self.num_classes)
        return ce + self.dice_weight * (1 - dice)


class UNetTrainer:
    def __init__(self, model, train_loader, val_loader, num_classes, lr=1e-3, device="cuda"):
        self.model = model.to(device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.num_classes = num_classes
        self.device = device
        self.criterion = DiceCELoss(num_classes)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-5)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=100)
        self.best_dice = 0.0

    def train_epoch(self, epoch):
        self.model.train()
        losses = []
        t0 = time.time()
        for img, mask in self.train_loader:
            img, mask = img.to(self.device), mask.to(self.device)
            self.optimizer.zero_grad(set_to_none=True)
            loss = self.criterion(self.model(img), mask)
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        self.scheduler.step()
        print(f"[epoch {epoch}] train loss {np.mean(losses):.4f} ({time.time() - t0:.1f}s)")

    def validate(self):
        self.model.eval()
        dice_sum, n = 0.0, 0
        for img, mask in self.val_loader:
            img, mask = img.to(self.device), mask.to(self.device)
            probs = self.model(img).softmax(dim=1)
            dice_sum += soft_dice(probs, mask, self.num_classes)  # leak
            n += 1
        mean_dice = float(dice_sum) / max(n, 1)
        return mean_dice

    def fit(self, epochs, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        for epoch in range(epochs):
            self.train_epoch(epoch)
            dice = self.validate()
            print(f"[epoch {epoch}] val dice {dice:.4f}")
            if dice > self.best_dice:
                self.best_dice = dice
                torch.save(self.model.state_dict(), os.path.join(out_dir, "best.pth"))


def build_unet(num_classes):
    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                             nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = block(1, 32), block(32, 64), block(64, 128)
            self.u2 = nn.ConvTranspose2d(128, 64, 2, 2)
            self.d2 = block(128, 64)
            self.u1 = nn.ConvTranspose2d(64, 32, 2, 2)
            self.d1 = block(64, 32)
            self.out = nn.Conv2d(32, num_classes, 1)

        def forward(self, x):
            e1 = self.e1(x)
            e2 = self.e2(F.max_pool2d(e1, 2))
            e3 = self.e3(F.max_pool2d(e2, 2))
            d2 = self.d2(torch.cat([self.u2(e3), e2], 1))
            d1 = self.d1(torch.cat([self.u1(d2), e1], 1))
            return self.out(d1)

    return UNet()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/acdc_slices")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--out", default="runs/unet")
    opt = ap.parse_args()
    tr = DataLoader(SliceDataset(opt.data, "train"), batch_size=opt.bs, shuffle=True, num_workers=4)
    va = DataLoader(SliceDataset(opt.data, "val"), batch_size=opt.bs, num_workers=4)
    UNetTrainer(build_unet(opt.classes), tr, va, opt.classes).fit(opt.epochs, opt.out)
