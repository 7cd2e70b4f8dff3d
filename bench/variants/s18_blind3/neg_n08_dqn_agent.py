"""Double-DQN agent. The environment loop lives in ``scripts/run_atari.py``."""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNet(nn.Module):
    def __init__(self, n_actions, in_ch=4):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_ch, 32, 8, 4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, 2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, 1), nn.ReLU(), nn.Flatten(),
        )
        self.head = nn.Sequential(nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, n_actions))

    def forward(self, x):
        return self.head(self.conv(x.float() / 255.0))


class DQNAgent:
    def __init__(self, n_actions, device="cuda", gamma=0.99, lr=1e-4,
                 eps_start=1.0, eps_end=0.01, eps_decay=1_000_000, trace_len=1000):
        self.n_actions = n_actions
        self.device = torch.device(device)
        self.gamma = gamma
        self.online = QNet(n_actions).to(self.device)
        self.target = QNet(n_actions).to(self.device)
        self.target.load_state_dict(self.online.state_dict())
        self.optim = torch.optim.Adam(self.online.parameters(), lr=lr, eps=1.5e-4)
        self.eps_start, self.eps_end, self.eps_decay = eps_start, eps_end, eps_decay
        self.steps = 0
        self.q_trace = deque(maxlen=trace_len)

    @property
    def epsilon(self):
        frac = min(1.0, self.steps / self.eps_decay)
        return self.eps_start + frac * (self.eps_end - self.eps_start)

    def act(self, obs):
        self.steps += 1
        if random.random() < self.epsilon:
            return random.randrange(self.n_actions)
        with torch.no_grad():
            q = self.online(torch.as_tensor(np.asarray(obs), device=self.device).unsqueeze(0))
        self.q_trace.append(q.max(dim=1).values)
        return int(q.argmax(dim=1).item())

    def mean_max_q(self):
        if not self.q_trace:
            return float("nan")
        return torch.cat(list(self.q_trace)).mean().item()

    def learn(self, batch):
        obs, actions, rewards, next_obs, dones = (t.to(self.device) for t in batch)
        q = self.online(obs).gather(1, actions.long().unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_a = self.online(next_obs).argmax(dim=1, keepdim=True)
            next_q = self.target(next_obs).gather(1, next_a).squeeze(1)
            target = rewards + self.gamma * (1.0 - dones.float()) * next_q
        loss = F.smooth_l1_loss(q, target)
        self.optim.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.online.parameters(), 10.0)
        self.optim.step()
        return loss.item()

    def sync_target(self):
        self.target.load_state_dict(self.online.state_dict())

    def save(self, path):
        torch.save({"online": self.online.state_dict(), "steps": self.steps}, path)
