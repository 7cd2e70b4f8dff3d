"""Double DQN agent."""
import copy
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from .base import BaseAgent
from .buffer import Batch


class QNetwork(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 256, dueling: bool = True):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.dueling = dueling
        self.adv = nn.Linear(hidden, n_actions)
        self.val = nn.Linear(hidden, 1) if dueling else None

    def forward(self, obs):
        h = self.body(obs)
        a = self.adv(h)
        return self.val(h) + a - a.mean(-1, keepdim=True) if self.dueling else a


class DQNAgent(BaseAgent):
    def __init__(self, obs_dim, n_actions, gamma=0.99, lr=2.5e-4, eps_start=1.0, eps_end=0.02,
                 eps_decay=50_000, target_update=2000, n_step=3, device="cuda"):
        super().__init__(device=device)
        self.q = QNetwork(obs_dim, n_actions).to(self.device)
        self.q_target = copy.deepcopy(self.q).eval()
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr, eps=1.5e-4)
        self.n_actions = n_actions
        self.gamma_n = gamma ** n_step
        self.eps_start, self.eps_end, self.eps_decay = eps_start, eps_end, eps_decay
        self.target_update = target_update

    def epsilon(self) -> float:
        return self.eps_end + (self.eps_start - self.eps_end) * math.exp(-self.steps_done / self.eps_decay)

    @torch.no_grad()
    def act(self, obs) -> int:
        self.steps_done += 1
        if random.random() < self.epsilon():
            return random.randrange(self.n_actions)
        q = self.q(torch.as_tensor(obs, dtype=torch.float32, device=self.device)[None])
        return int(q.argmax(-1))

    def learn(self, batch: Batch) -> float:
        q = self.q(batch.obs).gather(1, batch.action[:, None]).squeeze(1)
        with torch.no_grad():
            next_a = self.q(batch.next_obs).argmax(-1, keepdim=True)
            next_q = self.q_target(batch.next_obs).gather(1, next_a).squeeze(1)
            target = batch.reward + self.gamma_n * (1.0 - batch.done) * next_q
        loss = F.smooth_l1_loss(q, target)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.q.parameters(), 10.0)
        self.opt.step()
        if self.steps_done % self.target_update == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        self.record(td_loss=loss, q_mean=q.mean())
        return loss.item()

    def modules(self):
        return {"q": self.q, "q_target": self.q_target, "opt": self.opt}
