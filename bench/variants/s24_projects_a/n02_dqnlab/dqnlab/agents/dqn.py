"""Double DQN agent (van Hasselt et al., 2016)."""
import copy
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from dqnlab.agents.base import BaseAgent, LinearSchedule


class QNetwork(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_actions),
        )

    def forward(self, x):
        return self.net(x)


class DQNAgent(BaseAgent):
    def __init__(self, obs_dim, n_actions, lr=5e-4, gamma=0.99, target_update=500,
                 eps_start=1.0, eps_end=0.05, eps_decay=20_000, device="cpu"):
        super().__init__(device)
        self.n_actions = n_actions
        self.q = QNetwork(obs_dim, n_actions).to(self.device)
        self.q_target = copy.deepcopy(self.q).eval()
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.gamma = gamma
        self.target_update = target_update
        self.epsilon = LinearSchedule(eps_start, eps_end, eps_decay)

    def networks(self):
        return {"q": self.q, "q_target": self.q_target}

    @torch.no_grad()
    def act(self, obs: np.ndarray, t: int) -> int:
        if random.random() < self.epsilon(t):
            return random.randrange(self.n_actions)
        q = self.q(torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0))
        return int(q.argmax(1).item())

    def learn(self, batch) -> None:
        obs, actions, rewards, next_obs, dones = (b.to(self.device) for b in batch)
        q_values = self.q(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_actions = self.q(next_obs).argmax(1, keepdim=True)
            next_q = self.q_target(next_obs).gather(1, next_actions).squeeze(1)
            target = rewards + self.gamma * (1.0 - dones) * next_q
        loss = F.smooth_l1_loss(q_values, target)

        self.opt.zero_grad()
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.q.parameters(), 10.0)
        self.opt.step()

        self.train_steps += 1
        if self.train_steps % self.target_update == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        self.record(td_loss=loss.detach(), q_mean=q_values.detach().mean(), grad_norm=grad_norm)
