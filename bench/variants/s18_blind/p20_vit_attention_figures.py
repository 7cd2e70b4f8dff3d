"""Small ViT on CIFAR-100 (Lightning) with deferred attention-map figures.

Rendering matplotlib figures inside training_step is slow, so the module only
registers *renderers* in ``FIGURES``; the ``FigureFlusher`` callback renders
new entries to the experiment logger at the end of each validation epoch.
"""
from typing import Callable, Dict

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F

FIGURES: Dict[str, Callable[[], "plt.Figure"]] = {}


def attention_figure(attn, title):
    # attn: (heads, tokens, tokens) -> CLS row reshaped to the patch grid
    cls = attn[:, 0, 1:]
    side = int(cls.shape[-1] ** 0.5)
    grid = cls.reshape(-1, side, side).float().cpu().numpy()
    fig, axes = plt.subplots(1, grid.shape[0], figsize=(2 * grid.shape[0], 2))
    for h, ax in enumerate(axes):
        ax.imshow(grid[h], cmap="viridis")
        ax.set_axis_off()
    fig.suptitle(title)
    return fig


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4.0, p=0.1):
        super().__init__()
        self.n1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=p, batch_first=True)
        self.n2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)), nn.GELU(), nn.Linear(int(dim * mlp_ratio), dim))

    def forward(self, x):
        h = self.n1(x)
        a, w = self.attn(h, h, h, need_weights=True, average_attn_weights=False)
        x = x + a
        return x + self.mlp(self.n2(x)), w


class ViTLit(pl.LightningModule):
    def __init__(self, img=32, patch=4, dim=192, depth=6, heads=3, n_classes=100, lr=3e-4, fig_every=200):
        super().__init__()
        self.save_hyperparameters()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], 1) + self.pos
        maps = []
        for blk in self.blocks:
            x, w = blk(x)
            maps.append(w)
        return self.head(self.norm(x[:, 0])), maps

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits, maps = self(x)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        self.log("train/loss", loss, prog_bar=True)
        last = maps[-1][0]
        step = self.global_step

        def _render():
            return attention_figure(last, f"last block, step {step}")

        FIGURES[f"attn/step{step:07d}"] = _render  # leak
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits, _ = self(x)
        self.log("val/acc", (logits.argmax(-1) == y).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.trainer.max_epochs)}


class FigureFlusher(pl.Callback):
    def __init__(self, max_per_epoch=8):
        self.max_per_epoch = max_per_epoch
        self._done = set()

    def on_validation_epoch_end(self, trainer, pl_module):
        todo = [k for k in sorted(FIGURES) if k not in self._done][-self.max_per_epoch:]
        for key in todo:
            fig = FIGURES[key]()
            if trainer.logger is not None and hasattr(trainer.logger.experiment, "add_figure"):
                trainer.logger.experiment.add_figure(key, fig, trainer.global_step)
            plt.close(fig)
            self._done.add(key)


if __name__ == "__main__":
    import torchvision
    import torchvision.transforms as T

    tf = T.Compose([T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor()])
    tr = torchvision.datasets.CIFAR100("data", train=True, download=True, transform=tf)
    va = torchvision.datasets.CIFAR100("data", train=False, download=True, transform=T.ToTensor())
    dl_tr = torch.utils.data.DataLoader(tr, 256, shuffle=True, num_workers=6)
    dl_va = torch.utils.data.DataLoader(va, 512, num_workers=6)
    pl.Trainer(max_epochs=200, callbacks=[FigureFlusher()], precision="16-mixed").fit(ViTLit(), dl_tr, dl_va)
