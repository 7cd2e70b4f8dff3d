"""Dreamer-style world-model training step (RSSM + decoder + reward head) with activation probes."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, kl_divergence

log = logging.getLogger(__name__)


@dataclass
class WorldModelConfig:
    embed_dim: int = 1024
    action_dim: int = 6
    deter: int = 200
    stoch: int = 30
    hidden: int = 200
    lr: float = 6e-4
    free_nats: float = 3.0
    kl_scale: float = 1.0
    grad_clip: float = 100.0
    log_every: int = 100
    probe_modules: List[str] = field(default_factory=lambda: ["encoder", "rssm.cell", "decoder"])


class RSSM(nn.Module):
    def __init__(self, cfg: WorldModelConfig):
        super().__init__()
        self.deter, self.stoch = cfg.deter, cfg.stoch
        self.img_in = nn.Linear(cfg.stoch + cfg.action_dim, cfg.hidden)
        self.cell = nn.GRUCell(cfg.hidden, cfg.deter)
        self.prior_net = nn.Linear(cfg.deter, 2 * cfg.stoch)
        self.post_net = nn.Linear(cfg.deter + cfg.embed_dim, 2 * cfg.stoch)

    @staticmethod
    def _dist(stats: torch.Tensor) -> Independent:
        mean, std = stats.chunk(2, dim=-1)
        return Independent(Normal(mean, F.softplus(std) + 0.1), 1)

    def observe(self, embed: torch.Tensor, actions: torch.Tensor):
        T, B = embed.shape[:2]
        h = embed.new_zeros(B, self.deter)
        z = embed.new_zeros(B, self.stoch)
        feats, kls = [], []
        for t in range(T):
            x = F.elu(self.img_in(torch.cat([z, actions[t]], dim=-1)))
            h = self.cell(x, h)
            prior = self._dist(self.prior_net(h))
            post = self._dist(self.post_net(torch.cat([h, embed[t]], dim=-1)))
            z = post.rsample()
            feats.append(torch.cat([h, z], dim=-1))
            kls.append(kl_divergence(post, prior))
        return torch.stack(feats), torch.stack(kls)


class WorldModelTrainer:
    def __init__(self, encoder: nn.Module, decoder: nn.Module, reward_head: nn.Module,
                 cfg: WorldModelConfig, device: str = "cuda"):
        self.cfg = cfg
        self.encoder = encoder.to(device)
        self.rssm = RSSM(cfg).to(device)
        self.decoder = decoder.to(device)
        self.reward_head = reward_head.to(device)
        self.model = nn.ModuleDict({"encoder": self.encoder, "rssm": self.rssm,
                                    "decoder": self.decoder, "reward": self.reward_head})
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, eps=1e-5)
        self._probe_stats: Dict[str, float] = {}
        self.step = 0

    def _probe(self, name: str, module: nn.Module, inputs: Tuple, output) -> None:
        out = output[0] if isinstance(output, tuple) else output
        out = out.detach().float()
        self._probe_stats[f"act/{name}_std"] = out.std().item()
        self._probe_stats[f"act/{name}_absmax"] = out.abs().max().item()

    def _attach_probes(self) -> None:
        modules = dict(self.model.named_modules())
        for name in self.cfg.probe_modules:
            modules[name].register_forward_hook(partial(self._probe, name))  # leak

    def train_step(self, batch: Dict[str, torch.Tensor]) -> Dict[str, float]:
        obs, actions, rewards = batch["obs"], batch["actions"], batch["rewards"]  # [T, B, ...]
        if self.step % self.cfg.log_every == 0:
            self._attach_probes()

        T, B = obs.shape[:2]
        embed = self.encoder(obs.flatten(0, 1)).view(T, B, -1)
        feats, kl = self.rssm.observe(embed, actions)
        recon = self.decoder(feats.flatten(0, 1)).view_as(obs)
        recon_loss = F.mse_loss(recon, obs, reduction="none").flatten(2).sum(-1).mean()
        reward_loss = F.mse_loss(self.reward_head(feats).squeeze(-1), rewards)
        kl_loss = torch.clamp(kl.mean(), min=self.cfg.free_nats)
        loss = recon_loss + reward_loss + self.cfg.kl_scale * kl_loss

        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        self.opt.step()
        self.step += 1

        metrics = {"wm/recon": recon_loss.item(), "wm/reward": reward_loss.item(),
                   "wm/kl": kl.mean().item(), "wm/grad_norm": float(grad_norm)}
        metrics.update(self._probe_stats)
        return metrics
