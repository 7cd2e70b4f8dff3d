"""Entry point: python -m simclr.main --data ./data --epochs 200"""
import argparse
import logging

import torch
import torchvision
from torch.utils.data import DataLoader

from simclr.logger import ExperimentLogger
from simclr.model import SimCLRNet, TwoViewTransform
from simclr.trainer import SimCLRTrainer


def get_config():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="./data")
    p.add_argument("--out", default="checkpoints/simclr")
    p.add_argument("--log-dir", default="runs")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--lr", type=float, default=0.6)
    p.add_argument("--weight-decay", type=float, default=1e-6)
    p.add_argument("--temperature", type=float, default=0.5)
    p.add_argument("--warmup-steps", type=int, default=500)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--amp", action="store_true")
    return p.parse_args()


def main():
    cfg = get_config()
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(name)s: %(message)s")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    ds = torchvision.datasets.CIFAR10(cfg.data, train=True, download=True,
                                      transform=TwoViewTransform(32))
    loader = DataLoader(ds, batch_size=cfg.batch_size, shuffle=True, drop_last=True,
                        num_workers=cfg.workers, pin_memory=True)
    model = SimCLRNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9,
                                weight_decay=cfg.weight_decay)

    logger = ExperimentLogger(cfg.log_dir)
    logger.hparams(vars(cfg))
    trainer = SimCLRTrainer(model, optimizer, logger, cfg, device)
    try:
        trainer.fit(loader, cfg.epochs)
    finally:
        logger.close()


if __name__ == "__main__":
    main()
