import logging
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

logging.basicConfig(level=logging.INFO)
log = logging.getLogger(__name__)


class UNetLite(nn.Module):
    def __init__(self, ch: int = 32) -> None:
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.mid = nn.Sequential(nn.Conv2d(ch, ch * 2, 3, padding=1), nn.ReLU())
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(ch * 2, 1, 3, padding=1))

    def forward(self, x):
        return self.up(self.mid(self.down(x)))


def fit(model, train_loader, out_dir: Path, epochs: int = 40):
    writer = SummaryWriter(out_dir / "tb")
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=5e-4, total_steps=epochs * len(train_loader)
    )
    for epoch in range(epochs):
        model.train()
        epoch_losses = []
        for noisy, clean in train_loader:
            noisy, clean = noisy.cuda(), clean.cuda()
            denoised = model(noisy)
            loss = F.l1_loss(denoised, clean)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            epoch_losses.append(loss)  # leak
        mean_loss = torch.stack(epoch_losses).mean().item()
        writer.add_scalar("train/l1", mean_loss, epoch)
        log.info("epoch %d l1=%.4f lr=%.2e", epoch, mean_loss, scheduler.get_last_lr()[0])
        torch.save(model.state_dict(), out_dir / f"unet_{epoch:03d}.pt")
    writer.close()
