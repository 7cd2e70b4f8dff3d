"""DDIM sampler with classifier-free guidance for the class-conditional UNet.

    python sample_ddim.py --ckpt runs/cifar_cfg/ema_0400000.pt --n 5000 --steps 50 \
        --guidance 2.0 --outdir samples/cfg2
"""
import argparse
import math
import os

import torch
from torchvision.utils import save_image
from tqdm import tqdm

from diffusion.unet import UNetModel
from diffusion.schedules import make_beta_schedule


def extract(a, t, shape):
    out = a.gather(0, t)
    return out.view(-1, *([1] * (len(shape) - 1)))


class DDIMSampler:
    def __init__(self, eps_model, betas, num_steps=50, eta=0.0, null_class=None):
        self.eps_model = eps_model
        self.device = next(eps_model.parameters()).device
        alphas = 1.0 - betas
        self.alphas_cumprod = torch.cumprod(alphas, 0).to(self.device)
        self.T = len(betas)
        self.eta = eta
        self.null_class = null_class
        skip = self.T // num_steps
        self.timesteps = torch.arange(0, self.T, skip, device=self.device)

    def _eps(self, x, t, y, guidance):
        if y is None or guidance == 1.0:
            return self.eps_model(x, t, y)
        x_in = torch.cat([x, x])
        t_in = torch.cat([t, t])
        y_in = torch.cat([y, torch.full_like(y, self.null_class)])
        eps_c, eps_u = self.eps_model(x_in, t_in, y_in).chunk(2)
        return eps_u + guidance * (eps_c - eps_u)

    def sample(self, shape, y=None, guidance=1.0, progress=True):
        b = shape[0]
        x = torch.randn(shape, device=self.device)
        seq = self.timesteps.flip(0)
        seq_prev = torch.cat([seq[1:], torch.tensor([-1], device=self.device)])
        it = zip(seq.tolist(), seq_prev.tolist())
        if progress:
            it = tqdm(list(it), desc="ddim", leave=False)
        for t_cur, t_prev in it:
            t = torch.full((b,), t_cur, device=self.device, dtype=torch.long)
            a_t = self.alphas_cumprod[t_cur]
            a_prev = self.alphas_cumprod[t_prev] if t_prev >= 0 else torch.ones((), device=self.device)
            eps = self._eps(x, t, y, guidance)
            x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
            sigma = self.eta * ((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev)).sqrt()
            dir_xt = (1 - a_prev - sigma ** 2).sqrt() * eps
            noise = sigma * torch.randn_like(x) if t_prev >= 0 else 0.0
            x = a_prev.sqrt() * x0 + dir_xt + noise  # leak
        return x


def load_model(ckpt_path, device):
    ckpt = torch.load(ckpt_path, map_location="cpu")
    cfg = ckpt["config"]
    net = UNetModel(**cfg["model"])
    net.load_state_dict(ckpt["ema"] if "ema" in ckpt else ckpt["model"])
    return net.to(device).eval(), cfg


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--batch", type=int, default=250)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--eta", type=float, default=0.0)
    p.add_argument("--guidance", type=float, default=1.0)
    p.add_argument("--outdir", default="samples")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    net, cfg = load_model(args.ckpt, device)
    betas = make_beta_schedule(cfg["diffusion"]["schedule"], cfg["diffusion"]["T"])
    num_classes = cfg["model"].get("num_classes")
    sampler = DDIMSampler(net, betas, num_steps=args.steps, eta=args.eta, null_class=num_classes)

    os.makedirs(args.outdir, exist_ok=True)
    res = cfg["model"]["image_size"]
    n_batches = math.ceil(args.n / args.batch)
    idx = 0
    for bi in range(n_batches):
        bs = min(args.batch, args.n - idx)
        y = torch.randint(0, num_classes, (bs,), device=device) if num_classes else None
        imgs = sampler.sample((bs, 3, res, res), y=y, guidance=args.guidance)
        imgs = (imgs + 1) / 2
        for img in imgs:
            save_image(img, os.path.join(args.outdir, f"{idx:06d}.png"))
            idx += 1
        print(f"batch {bi + 1}/{n_batches}: {idx} images")


if __name__ == "__main__":
    main()
