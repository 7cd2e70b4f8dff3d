"""Training script for a vanilla NeRF (coarse + fine) on Blender synthetic scenes.

    python train_nerf.py --scene lego --datadir data/nerf_synthetic
"""
import argparse
import os
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from data.blender import load_blender_rays
from models.nerf import NeRFMLP, PositionalEncoding
from render import sample_along_rays, sample_pdf, volume_render


def config_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scene", type=str, default="lego")
    parser.add_argument("--datadir", type=str, default="data/nerf_synthetic")
    parser.add_argument("--expname", type=str, default="lego_base")
    parser.add_argument("--N_rand", type=int, default=1024)
    parser.add_argument("--N_samples", type=int, default=64)
    parser.add_argument("--N_importance", type=int, default=128)
    parser.add_argument("--lrate", type=float, default=5e-4)
    parser.add_argument("--lrate_decay", type=int, default=250)
    parser.add_argument("--iters_per_epoch", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--white_bkgd", action="store_true")
    return parser.parse_args()


def mse2psnr(x):
    return -10.0 * torch.log10(x)


class NeRFLoss(nn.Module):
    """Photometric loss on both the coarse and the fine renderings."""

    def __init__(self, coarse_weight=1.0):
        super().__init__()
        self.coarse_weight = coarse_weight

    def forward(self, pred, target):
        out = {}
        out["fine"] = F.mse_loss(pred["rgb_fine"], target)
        out["coarse"] = F.mse_loss(pred["rgb_coarse"], target)
        out["total"] = out["fine"] + self.coarse_weight * out["coarse"]
        return out


class Runner:
    def __init__(self, args, rays, device):
        self.args = args
        self.device = device
        self.rays_o, self.rays_d, self.rgb, self.near, self.far = rays
        self.embed_xyz = PositionalEncoding(10)
        self.embed_dir = PositionalEncoding(4)
        self.coarse = NeRFMLP(self.embed_xyz.out_dim, self.embed_dir.out_dim).to(device)
        self.fine = NeRFMLP(self.embed_xyz.out_dim, self.embed_dir.out_dim).to(device)
        params = list(self.coarse.parameters()) + list(self.fine.parameters())
        self.optim = torch.optim.Adam(params, lr=args.lrate, betas=(0.9, 0.999))
        self.criterion = NeRFLoss()
        self.step = 0
        self.log_dir = os.path.join("logs", args.expname)
        os.makedirs(self.log_dir, exist_ok=True)

    def sample_batch(self):
        idx = torch.randint(0, self.rays_o.shape[0], (self.args.N_rand,))
        return (self.rays_o[idx].to(self.device), self.rays_d[idx].to(self.device),
                self.rgb[idx].to(self.device))

    def render_rays(self, rays_o, rays_d):
        z_vals, pts = sample_along_rays(rays_o, rays_d, self.near, self.far,
                                        self.args.N_samples, perturb=True)
        raw = self.coarse(self.embed_xyz(pts), self.embed_dir(rays_d))
        rgb_c, weights, _ = volume_render(raw, z_vals, rays_d, white_bkgd=self.args.white_bkgd)

        z_mid = 0.5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_fine = sample_pdf(z_mid, weights[..., 1:-1].detach(), self.args.N_importance)
        z_all, _ = torch.sort(torch.cat([z_vals, z_fine], -1), -1)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_all[..., :, None]
        raw = self.fine(self.embed_xyz(pts), self.embed_dir(rays_d))
        rgb_f, _, depth = volume_render(raw, z_all, rays_d, white_bkgd=self.args.white_bkgd)
        return {"rgb_coarse": rgb_c, "rgb_fine": rgb_f, "depth": depth}

    def update_lr(self):
        decay_steps = self.args.lrate_decay * 1000
        new_lr = self.args.lrate * (0.1 ** (self.step / decay_steps))
        for g in self.optim.param_groups:
            g["lr"] = new_lr

    def _step(self):
        rays_o, rays_d, target = self.sample_batch()
        pred = self.render_rays(rays_o, rays_d)
        losses = self.criterion(pred, target)
        self.optim.zero_grad()
        losses["total"].backward()
        self.optim.step()
        self.update_lr()
        self.step += 1
        return losses

    def train_epoch(self, epoch):
        self.coarse.train()
        self.fine.train()
        epoch_stats = defaultdict(float)
        for _ in range(self.args.iters_per_epoch):
            losses = self._step()
            for k, v in losses.items():
                epoch_stats[k] += v.detach()
        n = self.args.iters_per_epoch
        summary = {k: (v / n).item() for k, v in epoch_stats.items()}
        summary["psnr"] = float(mse2psnr(torch.tensor(summary["fine"])))
        return summary

    def save(self, epoch):
        path = os.path.join(self.log_dir, f"{epoch:04d}.tar")
        torch.save({"step": self.step,
                    "coarse": self.coarse.state_dict(),
                    "fine": self.fine.state_dict(),
                    "optim": self.optim.state_dict()}, path)

    def run(self):
        for epoch in range(self.args.epochs):
            summary = self.train_epoch(epoch)
            print(f"[epoch {epoch}] step {self.step} loss {summary['total']:.5f} "
                  f"psnr {summary['psnr']:.2f}")
            if epoch % 10 == 0:
                self.save(epoch)


if __name__ == "__main__":
    args = config_parser()
    dev = torch.device("cuda")
    np.random.seed(0)
    torch.manual_seed(0)
    rays = load_blender_rays(os.path.join(args.datadir, args.scene), split="train", half_res=True)
    Runner(args, rays, dev).run()
