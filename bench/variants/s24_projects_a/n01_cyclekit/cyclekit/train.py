"""python -m cyclekit.train --dataroot datasets/horse2zebra"""
import argparse
import itertools
import logging
import os

import torch
import torchvision.transforms as T
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from cyclekit import engine, networks, utils

log = logging.getLogger("cyclekit")


class UnalignedDataset(Dataset):
    def __init__(self, root: str, phase: str = "train", size: int = 256):
        self.dir_a = os.path.join(root, phase + "A")
        self.dir_b = os.path.join(root, phase + "B")
        self.a = sorted(os.listdir(self.dir_a))
        self.b = sorted(os.listdir(self.dir_b))
        self.tf = T.Compose([T.Resize(int(size * 1.12)), T.RandomCrop(size),
                             T.RandomHorizontalFlip(), T.ToTensor(),
                             T.Normalize((0.5,) * 3, (0.5,) * 3)])

    def __len__(self):
        return max(len(self.a), len(self.b))

    def __getitem__(self, i):
        a = Image.open(os.path.join(self.dir_a, self.a[i % len(self.a)])).convert("RGB")
        b = Image.open(os.path.join(self.dir_b, self.b[torch.randint(len(self.b), ()).item()])).convert("RGB")
        return self.tf(a), self.tf(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataroot", required=True)
    ap.add_argument("--n-epochs", type=int, default=100)
    ap.add_argument("--n-epochs-decay", type=int, default=100)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--pool-size", type=int, default=50)
    ap.add_argument("--ckpt", default="checkpoints/cyclegan")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    loader = DataLoader(UnalignedDataset(args.dataroot), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers)
    nets = {"G_ab": networks.ResnetGenerator(), "G_ba": networks.ResnetGenerator(),
            "D_a": networks.PatchDiscriminator(), "D_b": networks.PatchDiscriminator()}
    nets = {k: networks.init_weights(v).to(device) for k, v in nets.items()}
    opts = {
        "G": torch.optim.Adam(itertools.chain(nets["G_ab"].parameters(), nets["G_ba"].parameters()),
                              lr=args.lr, betas=(0.5, 0.999)),
        "D": torch.optim.Adam(itertools.chain(nets["D_a"].parameters(), nets["D_b"].parameters()),
                              lr=args.lr, betas=(0.5, 0.999)),
    }
    scheds = [torch.optim.lr_scheduler.LambdaLR(
        o, lambda e: utils.linear_decay(e, args.n_epochs, args.n_epochs_decay)) for o in opts.values()]
    pools = {"a": utils.ImagePool(args.pool_size), "b": utils.ImagePool(args.pool_size)}

    for epoch in range(args.n_epochs + args.n_epochs_decay):
        totals, n = {}, 0
        for real_a, real_b in loader:
            losses = engine.train_step(real_a.to(device), real_b.to(device), nets, opts, pools)
            for k, v in losses.items():
                totals[k] = totals.get(k, 0.0) + v
            n += 1
        for s in scheds:
            s.step()
        log.info("epoch %d | %s", epoch, " ".join(f"{k}={v / n:.3f}" for k, v in totals.items()))
        os.makedirs(args.ckpt, exist_ok=True)
        torch.save({k: v.state_dict() for k, v in nets.items()}, os.path.join(args.ckpt, "latest.pt"))


if __name__ == "__main__":
    main()
