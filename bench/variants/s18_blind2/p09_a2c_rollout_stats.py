"""Synchronous A2C on gymnasium classic-control / Atari-RAM envs."""
import argparse
import time
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


class RolloutStorage:
    def __init__(self, n_steps, n_envs, obs_dim, device):
        self.obs = torch.zeros(n_steps + 1, n_envs, obs_dim, device=device)
        self.actions = torch.zeros(n_steps, n_envs, dtype=torch.long, device=device)
        self.rewards = torch.zeros(n_steps, n_envs, device=device)
        self.masks = torch.ones(n_steps + 1, n_envs, device=device)
        self.step = 0

    def insert(self, obs, action, reward, mask):
        self.obs[self.step + 1].copy_(obs)
        self.actions[self.step].copy_(action)
        self.rewards[self.step].copy_(reward)
        self.masks[self.step + 1].copy_(mask)
        self.step = (self.step + 1) % self.actions.size(0)

    def after_update(self):
        self.obs[0].copy_(self.obs[-1])
        self.masks[0].copy_(self.masks[-1])

    def returns(self, next_value, gamma):
        ret = torch.zeros_like(self.rewards)
        running = next_value
        for t in reversed(range(self.rewards.size(0))):
            running = self.rewards[t] + gamma * running * self.masks[t + 1]
            ret[t] = running
        return ret


def a2c_update(net, opt, storage, args):
    n, e = storage.actions.shape
    dist, values = net(storage.obs[:-1].reshape(n * e, -1))
    with torch.no_grad():
        _, next_v = net(storage.obs[-1])
    returns = storage.returns(next_v, args.gamma).reshape(-1)
    adv = returns - values
    pg = -(dist.log_prob(storage.actions.reshape(-1)) * adv.detach()).mean()
    vf = adv.pow(2).mean()
    ent = dist.entropy().mean()
    total = pg + args.vf_coef * vf - args.ent_coef * ent
    opt.zero_grad()
    total.backward()
    nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
    opt.step()
    return {"pg": pg, "vf": vf, "entropy": ent}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--n-envs", type=int, default=16)
    ap.add_argument("--n-steps", type=int, default=5)
    ap.add_argument("--updates", type=int, default=200000)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--vf-coef", type=float, default=0.5)
    ap.add_argument("--ent-coef", type=float, default=0.01)
    ap.add_argument("--max-grad-norm", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=7e-4)
    args = ap.parse_args()

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    envs = gym.vector.SyncVectorEnv([lambda: gym.make(args.env) for _ in range(args.n_envs)])
    obs_dim = envs.single_observation_space.shape[0]
    net = ActorCritic(obs_dim, envs.single_action_space.n).to(dev)
    opt = torch.optim.RMSprop(net.parameters(), lr=args.lr, alpha=0.99, eps=1e-5)
    storage = RolloutStorage(args.n_steps, args.n_envs, obs_dim, dev)

    obs, _ = envs.reset(seed=0)
    storage.obs[0].copy_(torch.as_tensor(obs, dtype=torch.float32))
    ep_returns, ep_ret = deque(maxlen=100), np.zeros(args.n_envs)
    totals = {"pg": 0.0, "vf": 0.0, "entropy": 0.0}
    t0 = time.time()
    for upd in range(1, args.updates + 1):
        for _ in range(args.n_steps):
            with torch.no_grad():
                dist, _ = net(storage.obs[storage.step])
                action = dist.sample()
            obs, rew, term, trunc, _ = envs.step(action.cpu().numpy())
            done = np.logical_or(term, trunc)
            ep_ret += rew
            for i in np.nonzero(done)[0]:
                ep_returns.append(ep_ret[i]); ep_ret[i] = 0
            storage.insert(torch.as_tensor(obs, dtype=torch.float32, device=dev), action,
                           torch.as_tensor(rew, dtype=torch.float32, device=dev),
                           torch.as_tensor(1.0 - done, dtype=torch.float32, device=dev))
        stats = a2c_update(net, opt, storage, args)
        storage.after_update()
        for k, v in stats.items():
            totals[k] += v  # leak
        if upd % 1000 == 0:
            avg = {k: float(v) / upd for k, v in totals.items()}
            print(f"upd {upd} fps {int(upd * args.n_steps * args.n_envs / (time.time() - t0))} "
                  f"ret {np.mean(ep_returns) if ep_returns else 0:.1f} {avg}")


if __name__ == "__main__":
    main()
