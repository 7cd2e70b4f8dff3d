"""PPO with a rollout worker that tolerates flaky simulator episodes (MuJoCo / Brax wrappers)."""
import argparse
import logging
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal

logger = logging.getLogger("ppo")


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=64):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                               nn.Linear(hidden, 1))

    def dist(self, obs):
        return Normal(self.mu(obs), self.log_std.exp())

    def value(self, obs):
        return self.v(obs).squeeze(-1)


@dataclass
class Batch:
    obs: torch.Tensor
    act: torch.Tensor
    logp: torch.Tensor
    ret: torch.Tensor
    adv: torch.Tensor


class RolloutWorker:
    def __init__(self, env_id, policy, device, gamma=0.99, lam=0.95):
        self.env = gym.make(env_id)
        self.policy, self.device = policy, device
        self.gamma, self.lam = gamma, lam
        self.n_failed = 0
        self.last_failure = None
        self.episode_idx = 0

    def _run_episode(self, max_steps):
        obs_l, act_l, logp_l, rew_l, val_l = [], [], [], [], []
        obs, _ = self.env.reset()
        for _ in range(max_steps):
            o = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
            with torch.no_grad():
                d = self.policy.dist(o)
                a = d.sample()
                obs_l.append(o); act_l.append(a); logp_l.append(d.log_prob(a).sum()); val_l.append(self.policy.value(o))
            obs, r, term, trunc, _ = self.env.step(a.cpu().numpy())
            if not np.isfinite(obs).all():
                raise FloatingPointError("simulator produced non-finite state")
            rew_l.append(float(r))
            if term or trunc:
                break
        return obs_l, act_l, logp_l, rew_l, val_l

    def _gae(self, rews, vals):
        adv, last = [0.0] * len(rews), 0.0
        vals = [v.item() for v in vals] + [0.0]
        for t in reversed(range(len(rews))):
            delta = rews[t] + self.gamma * vals[t + 1] - vals[t]
            last = delta + self.gamma * self.lam * last
            adv[t] = last
        return adv, [a + v for a, v in zip(adv, vals[:-1])]

    def collect(self, n_steps, max_ep_len=1000):
        buf = {"obs": [], "act": [], "logp": [], "ret": [], "adv": []}
        returns = []
        while len(buf["obs"]) < n_steps:
            self.episode_idx += 1
            try:
                obs_l, act_l, logp_l, rew_l, val_l = self._run_episode(max_ep_len)
            except (FloatingPointError, RuntimeError) as err:
                self.n_failed += 1
                self.last_failure = f"episode {self.episode_idx}: {type(err).__name__}: {err}"
                self.env.close()
                self.env = gym.make(self.env.spec.id)
                continue
            adv, ret = self._gae(rew_l, val_l)
            buf["obs"] += obs_l; buf["act"] += act_l; buf["logp"] += logp_l
            buf["adv"] += adv; buf["ret"] += ret
            returns.append(sum(rew_l))
        adv = torch.tensor(buf["adv"], device=self.device)
        return Batch(torch.stack(buf["obs"]), torch.stack(buf["act"]), torch.stack(buf["logp"]),
                     torch.tensor(buf["ret"], device=self.device), (adv - adv.mean()) / (adv.std() + 1e-8)), returns


def ppo_update(policy, opt, batch, epochs=10, mb=64, clip=0.2):
    n = batch.obs.size(0)
    for _ in range(epochs):
        for idx in torch.randperm(n, device=batch.obs.device).split(mb):
            d = policy.dist(batch.obs[idx])
            ratio = (d.log_prob(batch.act[idx]).sum(-1) - batch.logp[idx]).exp()
            pg = -torch.min(ratio * batch.adv[idx], ratio.clamp(1 - clip, 1 + clip) * batch.adv[idx]).mean()
            vf = (policy.value(batch.obs[idx]) - batch.ret[idx]).pow(2).mean()
            loss = pg + 0.5 * vf - 0.0 * d.entropy().mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="HalfCheetah-v4")
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--steps", type=int, default=2048)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    probe = gym.make(args.env)
    policy = Policy(probe.observation_space.shape[0], probe.action_space.shape[0]).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    worker = RolloutWorker(args.env, policy, device)
    for it in range(args.iters):
        batch, rets = worker.collect(args.steps)
        ppo_update(policy, opt, batch)
        logger.info("iter %d mean return %.1f failed episodes so far %d", it, np.mean(rets) if rets else float("nan"),
                    worker.n_failed)


if __name__ == "__main__":
    main()
