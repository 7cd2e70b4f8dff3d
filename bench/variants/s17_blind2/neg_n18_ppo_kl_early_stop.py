"""Continuous-control PPO learner with KL-based early stopping of the update epochs."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                               nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def dist(self, obs):
        return Normal(self.pi(obs), self.log_std.exp())


class PPOLearner:
    def __init__(self, ac, lr=3e-4, clip=0.2, target_kl=0.015, epochs=10, minibatch=64, device="cuda"):
        self.ac = ac.to(device)
        self.opt = torch.optim.Adam(ac.parameters(), lr=lr, eps=1e-5)
        self.clip, self.target_kl, self.epochs, self.minibatch = clip, target_kl, epochs, minibatch
        self.device = device
        self.kl_history = []

    def _minibatch_loss(self, obs, act, old_logp, adv, ret):
        dist = self.ac.dist(obs)
        logp = dist.log_prob(act).sum(-1)
        logratio = logp - old_logp
        ratio = logratio.exp()
        with torch.no_grad():
            approx_kl = ((ratio - 1) - logratio).mean()
        pg_loss = -torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv).mean()
        v_loss = 0.5 * (self.ac.v(obs).squeeze(-1) - ret).pow(2).mean()
        ent = dist.entropy().sum(-1).mean()
        return pg_loss + 0.5 * v_loss - 0.001 * ent, approx_kl

    def _should_stop(self, n_minibatches):
        recent = self.kl_history[-n_minibatches:]
        return sum(recent) / len(recent) > 1.5 * self.target_kl

    def update(self, batch):
        obs, act, old_logp, adv, ret = (torch.as_tensor(batch[k], device=self.device, dtype=torch.float32)
                                        for k in ("obs", "act", "logp", "adv", "ret"))
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        n = obs.size(0)
        n_mb = max(n // self.minibatch, 1)
        self.kl_history = []
        for epoch in range(self.epochs):
            perm = torch.randperm(n, device=self.device)
            for start in range(0, n, self.minibatch):
                idx = perm[start:start + self.minibatch]
                loss, approx_kl = self._minibatch_loss(obs[idx], act[idx], old_logp[idx], adv[idx], ret[idx])
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.ac.parameters(), 0.5)
                self.opt.step()
                self.kl_history.append(approx_kl.item())
            if self._should_stop(n_mb):
                print(f"early stop at epoch {epoch}")
                break
        return {"loss": loss.item(), "kl": self.kl_history[-1]}


def train(env, learner, rollout_fn, iterations=1000):
    for it in range(iterations):
        batch = rollout_fn(env, learner.ac)
        stats = learner.update(batch)
        if it % 10 == 0:
            print(it, {k: np.round(v, 4) for k, v in stats.items()})
