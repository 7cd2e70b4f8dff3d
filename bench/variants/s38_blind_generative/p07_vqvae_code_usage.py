"""VQ-VAE with EMA codebook updates and codebook-usage diagnostics."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

_CODE_HISTORY = []


def codebook_perplexity(num_codes: int) -> float:
    if not _CODE_HISTORY:
        return 0.0
    counts = torch.bincount(torch.cat(_CODE_HISTORY), minlength=num_codes).float()
    probs = counts / counts.sum()
    return torch.exp(-(probs * torch.log(probs + 1e-10)).sum()).item()


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_codes: int = 512, dim: int = 64, decay: float = 0.99, eps: float = 1e-5):
        super().__init__()
        self.num_codes, self.dim, self.decay, self.eps = num_codes, dim, decay, eps
        embed = torch.randn(num_codes, dim)
        self.register_buffer("embed", embed)
        self.register_buffer("cluster_size", torch.zeros(num_codes))
        self.register_buffer("embed_avg", embed.clone())

    def forward(self, z: torch.Tensor):
        B, C, H, W = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, C)
        dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.embed.t() + self.embed.pow(2).sum(1)
        idx = dist.argmin(1)
        _CODE_HISTORY.append(idx)  # leak
        quant = F.embedding(idx, self.embed).view(B, H, W, C).permute(0, 3, 1, 2)
        if self.training:
            with torch.no_grad():
                onehot = F.one_hot(idx, self.num_codes).type(flat.dtype)
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                self.embed_avg.mul_(self.decay).add_(onehot.t() @ flat, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + self.eps) / (n + self.num_codes * self.eps) * n
                self.embed.copy_(self.embed_avg / size.unsqueeze(1))
        commit = F.mse_loss(z, quant.detach())
        quant = z + (quant - z).detach()
        return quant, commit, idx.view(B, H, W)


def res_block(ch):
    return nn.Sequential(nn.ReLU(), nn.Conv2d(ch, ch, 3, 1, 1), nn.ReLU(), nn.Conv2d(ch, ch, 1))


class VQVAE(nn.Module):
    def __init__(self, ch=128, dim=64, num_codes=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, ch, 4, 2, 1), nn.ReLU(), nn.Conv2d(ch, ch, 4, 2, 1),
                                     res_block(ch), res_block(ch), nn.Conv2d(ch, dim, 1))
        self.vq = VectorQuantizerEMA(num_codes, dim)
        self.decoder = nn.Sequential(nn.Conv2d(dim, ch, 3, 1, 1), res_block(ch), res_block(ch),
                                     nn.ConvTranspose2d(ch, ch, 4, 2, 1), nn.ReLU(),
                                     nn.ConvTranspose2d(ch, 3, 4, 2, 1))

    def forward(self, x):
        q, commit, codes = self.vq(self.encoder(x))
        return self.decoder(q), commit, codes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="./data")
    ap.add_argument("--steps", type=int, default=250000)
    ap.add_argument("--beta", type=float, default=0.25)
    ap.add_argument("--log_every", type=int, default=500)
    args = ap.parse_args()

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    loader = DataLoader(datasets.CIFAR10(args.data, train=True, download=True, transform=tf),
                        batch_size=128, shuffle=True, num_workers=4, drop_last=True, pin_memory=True)
    model = VQVAE().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    step = 0
    while step < args.steps:
        for x, _ in loader:
            x = x.cuda(non_blocking=True)
            recon, commit, _ = model(x)
            rec = F.mse_loss(recon, x)
            loss = rec + args.beta * commit
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % args.log_every == 0:
                ppl = codebook_perplexity(model.vq.num_codes)
                print(f"step {step} rec {rec.item():.4f} commit {commit.item():.4f} ppl {ppl:.1f}")
            if step >= args.steps:
                break
    torch.save(model.state_dict(), "vqvae.pt")


if __name__ == "__main__":
    main()
