import random
from dataclasses import dataclass, field

import gym
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass
class Transition:
    state: torch.Tensor
    action: int
    reward: float
    next_state: torch.Tensor
    done: bool


@dataclass
class ReplayMemory:
    storage: list = field(default_factory=list)

    def push(self, *args):
        self.storage.append(Transition(*args))  # leak

    def sample(self, batch_size):
        return random.sample(self.storage, batch_size)

    def __len__(self):
        return len(self.storage)


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 128), nn.ReLU(), nn.Linear(128, n_actions))

    def forward(self, x):
        return self.net(x)


def optimize(policy, target, memory, opt, gamma=0.99, bs=128):
    batch = memory.sample(bs)
    s = torch.stack([t.state for t in batch])
    a = torch.tensor([t.action for t in batch], device=device)
    r = torch.tensor([t.reward for t in batch], device=device)
    s2 = torch.stack([t.next_state for t in batch])
    d = torch.tensor([t.done for t in batch], device=device, dtype=torch.float32)
    q = policy(s).gather(1, a[:, None]).squeeze(1)
    with torch.no_grad():
        y = r + gamma * (1 - d) * target(s2).max(1).values
    loss = F.smooth_l1_loss(q, y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def run(episodes=500):
    env = gym.make("CartPole-v1")
    policy = QNet(4, 2).to(device)
    target = QNet(4, 2).to(device)
    target.load_state_dict(policy.state_dict())
    opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
    memory = ReplayMemory()
    eps = 1.0
    for ep in range(episodes):
        obs, _ = env.reset()
        state = torch.as_tensor(obs, dtype=torch.float32, device=device)
        done = False
        while not done:
            if random.random() < eps:
                action = env.action_space.sample()
            else:
                with torch.no_grad():
                    action = policy(state).argmax().item()
            obs, reward, term, trunc, _ = env.step(action)
            done = term or trunc
            nxt = torch.as_tensor(obs, dtype=torch.float32, device=device)
            memory.push(state, action, reward, nxt, done)
            state = nxt
            if len(memory) >= 1000:
                optimize(policy, target, memory, opt)
        eps = max(0.05, eps * 0.995)
        if ep % 10 == 0:
            target.load_state_dict(policy.state_dict())
