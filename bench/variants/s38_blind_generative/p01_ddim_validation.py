"""Periodic validation sampling for the class-conditional pixel diffusion trainer."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image

from models.unet import ClassConditionalUNet


def linear_beta_schedule(num_steps: int, start: float = 1e-4, end: float = 2e-2) -> torch.Tensor:
    return torch.linspace(start, end, num_steps, dtype=torch.float64).float()


class DDIMSampler:
    def __init__(self, model: nn.Module, num_train_steps: int = 1000, eta: float = 0.0):
        self.model = model
        self.num_train_steps = num_train_steps
        self.alphas_cumprod = torch.cumprod(1.0 - linear_beta_schedule(num_train_steps), dim=0)
        self.eta = eta

    def timesteps(self, num_inference_steps: int):
        stride = self.num_train_steps // num_inference_steps
        return list(range(0, self.num_train_steps, stride))[::-1]

    def sample(self, shape, labels, num_inference_steps=50, guidance_scale=3.0):
        device = labels.device
        acp = self.alphas_cumprod.to(device)
        x = torch.randn(shape, device=device)
        steps = self.timesteps(num_inference_steps)
        null_labels = torch.full_like(labels, self.model.num_classes)
        one = torch.tensor(1.0, device=device)
        for i, t in enumerate(steps):
            t_prev = steps[i + 1] if i + 1 < len(steps) else -1
            a_t = acp[t]
            a_prev = acp[t_prev] if t_prev >= 0 else one
            t_batch = torch.full((shape[0],), t, device=device, dtype=torch.long)
            x_in = torch.cat([x, x], dim=0)
            t_in = torch.cat([t_batch, t_batch], dim=0)
            y_in = torch.cat([labels, null_labels], dim=0)
            eps_cond, eps_uncond = self.model(x_in, t_in, y_in).chunk(2)
            eps = eps_uncond + guidance_scale * (eps_cond - eps_uncond)
            x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
            sigma = self.eta * ((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev)).sqrt()
            dir_xt = (1 - a_prev - sigma ** 2).clamp(min=0).sqrt() * eps
            x = a_prev.sqrt() * x0 + dir_xt + sigma * torch.randn_like(x)  # leak
        return x


def validate(model, sampler, step, args, device):
    model.eval()
    labels = torch.arange(args.num_classes, device=device).repeat_interleave(args.per_class)
    shape = (labels.numel(), 3, args.image_size, args.image_size)
    samples = sampler.sample(shape, labels, args.val_steps, args.guidance_scale)
    save_image((samples + 1) / 2, os.path.join(args.out_dir, f"val_{step:07d}.png"), nrow=args.per_class)
    model.train()


def train(args):
    device = torch.device("cuda")
    tfm = transforms.Compose([
        transforms.Resize(args.image_size),
        transforms.CenterCrop(args.image_size),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.5] * 3, [0.5] * 3),
    ])
    ds = datasets.ImageFolder(args.data_dir, transform=tfm)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8, drop_last=True)
    model = ClassConditionalUNet(num_classes=args.num_classes, base_channels=128).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    sampler = DDIMSampler(model, eta=args.eta)
    acp = sampler.alphas_cumprod.to(device)

    step = 0
    while step < args.max_steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            drop = torch.rand(y.shape, device=device) < args.cond_drop
            y = torch.where(drop, torch.full_like(y, args.num_classes), y)
            t = torch.randint(0, sampler.num_train_steps, (x.size(0),), device=device)
            noise = torch.randn_like(x)
            a = acp[t].view(-1, 1, 1, 1)
            x_t = a.sqrt() * x + (1 - a).sqrt() * noise
            loss = F.mse_loss(model(x_t, t, y), noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % args.log_every == 0:
                print(f"step {step} loss {loss.item():.4f}")
            if step % args.val_every == 0:
                validate(model, sampler, step, args, device)
            if step >= args.max_steps:
                break


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", required=True)
    p.add_argument("--out_dir", default="runs/ddim")
    p.add_argument("--image_size", type=int, default=64)
    p.add_argument("--num_classes", type=int, default=10)
    p.add_argument("--per_class", type=int, default=8)
    p.add_argument("--batch_size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--eta", type=float, default=0.0)
    p.add_argument("--cond_drop", type=float, default=0.1)
    p.add_argument("--guidance_scale", type=float, default=3.0)
    p.add_argument("--val_steps", type=int, default=50)
    p.add_argument("--val_every", type=int, default=5000)
    p.add_argument("--log_every", type=int, default=100)
    p.add_argument("--max_steps", type=int, default=400000)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    train(args)
