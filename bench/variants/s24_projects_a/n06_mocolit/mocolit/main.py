"""Launch MoCo v2 pre-training.

    python -m mocolit.main --data /datasets/imagenet/train --gpus 4
"""
import argparse

import pytorch_lightning as pl
import torchvision.transforms as T
from pytorch_lightning.loggers import TensorBoardLogger
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

from mocolit.callbacks import EpochLossSummary, QueueMonitor
from mocolit.module import MoCo


class TwoCrops:
    def __init__(self, tf):
        self.tf = tf

    def __call__(self, x):
        return self.tf(x), self.tf(x)


def moco_v2_transform(size: int = 224):
    return T.Compose([
        T.RandomResizedCrop(size, scale=(0.2, 1.0)),
        T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
        T.RandomGrayscale(p=0.2),
        T.RandomApply([T.GaussianBlur(23, sigma=(0.1, 2.0))], p=0.5),
        T.RandomHorizontalFlip(),
        T.ToTensor(),
        T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.03)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--log-dir", default="lightning_logs")
    args = ap.parse_args()

    ds = ImageFolder(args.data, transform=TwoCrops(moco_v2_transform()))
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                        num_workers=args.workers, pin_memory=True, persistent_workers=True)
    model = MoCo(lr=args.lr, max_epochs=args.epochs)
    logger = TensorBoardLogger(args.log_dir, name="moco_v2")
    trainer = pl.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=args.gpus,
                         strategy="ddp" if args.gpus > 1 else "auto", precision="16-mixed",
                         logger=logger, callbacks=[EpochLossSummary(), QueueMonitor()])
    trainer.fit(model, loader)


if __name__ == "__main__":
    main()
