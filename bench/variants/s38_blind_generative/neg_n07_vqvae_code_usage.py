"""Vector quantiser with straight-through gradients, usage tracking and dead-code restarts."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes: int = 1024, dim: int = 256, beta: float = 0.25,
                 usage_decay: float = 0.99, dead_threshold: float = 1e-3):
        super().__init__()
        self.num_codes = num_codes
        self.beta = beta
        self.usage_decay = usage_decay
        self.dead_threshold = dead_threshold
        self.codebook = nn.Embedding(num_codes, dim)
        nn.init.uniform_(self.codebook.weight, -1.0 / num_codes, 1.0 / num_codes)
        self.register_buffer("usage", torch.zeros(num_codes))
        self.register_buffer("window_counts", torch.zeros(num_codes, dtype=torch.long))

    @torch.no_grad()
    def _track(self, idx: torch.Tensor):
        counts = torch.bincount(idx, minlength=self.num_codes)
        self.window_counts += counts
        self.usage.mul_(self.usage_decay).add_(counts.float(), alpha=1 - self.usage_decay)

    @torch.no_grad()
    def restart_dead_codes(self, z_flat: torch.Tensor) -> int:
        dead = (self.usage < self.dead_threshold).nonzero(as_tuple=True)[0]
        if dead.numel() == 0:
            return 0
        pick = torch.randint(0, z_flat.size(0), (dead.numel(),), device=z_flat.device)
        self.codebook.weight.data[dead] = z_flat[pick].detach()
        self.usage[dead] = 1.0
        return int(dead.numel())

    @torch.no_grad()
    def perplexity_and_reset(self) -> float:
        probs = self.window_counts.float() / self.window_counts.sum().clamp(min=1)
        ppl = torch.exp(-(probs * torch.log(probs + 1e-10)).sum()).item()
        self.window_counts.zero_()
        return ppl

    def forward(self, z: torch.Tensor):
        B, C, H, W = z.shape
        flat = z.permute(0, 2, 3, 1).reshape(-1, C)
        w = self.codebook.weight
        dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ w.t() + w.pow(2).sum(1)
        idx = dist.argmin(1)
        if self.training:
            self._track(idx)
        quant = self.codebook(idx).view(B, H, W, C).permute(0, 3, 1, 2)
        loss = F.mse_loss(quant, z.detach()) + self.beta * F.mse_loss(z, quant.detach())
        quant = z + (quant - z).detach()
        return quant, loss, idx.view(B, H, W)


def train_epoch(model, loader, opt, step: int, log_every: int = 200, restart_every: int = 1000):
    model.train()
    for x, _ in loader:
        x = x.cuda(non_blocking=True)
        z = model.encoder(x)
        q, vq_loss, _ = model.vq(z)
        recon = model.decoder(q)
        rec_loss = F.mse_loss(recon, x)
        loss = rec_loss + vq_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        if step % restart_every == 0:
            n_dead = model.vq.restart_dead_codes(z.permute(0, 2, 3, 1).reshape(-1, z.size(1)))
            if n_dead:
                print(f"step {step}: restarted {n_dead} codes")
        if step % log_every == 0:
            ppl = model.vq.perplexity_and_reset()
            print(f"step {step} rec {rec_loss.item():.4f} vq {vq_loss.item():.4f} ppl {ppl:.1f}")
    return step
