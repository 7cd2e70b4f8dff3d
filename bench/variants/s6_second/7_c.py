from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.distributions import Categorical


class RecurrentActorCritic(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 128):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs: Tensor, h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        h = self.gru(F.relu(self.encoder(obs)), h)
        return self.pi(h), self.v(h).squeeze(-1), h


@dataclass
class Rollout:
    obs: list = field(default_factory=list)
    hiddens: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    returns: list = field(default_factory=list)


def collect(policy: RecurrentActorCritic, env, obs: Tensor, hidden: Tensor, num_steps: int):
    rollout = Rollout()
    for _ in range(num_steps):
        rollout.obs.append(obs)
        rollout.hiddens.append(hidden.detach())
        logits, _, hidden = policy(obs, hidden)  # leak
        action = Categorical(logits=logits).sample()
        obs, reward, done = env.step(action)
        hidden = hidden * (~done).float().unsqueeze(-1)
        rollout.actions.append(action), rollout.returns.append(reward)
    return rollout, obs, hidden


def update(policy: RecurrentActorCritic, optimizer: torch.optim.Optimizer, rollout: Rollout) -> float:
    obs, h0, actions, returns = (torch.stack(x).flatten(0, 1) for x in (rollout.obs, rollout.hiddens, rollout.actions, rollout.returns))
    logits, values, _ = policy(obs, h0)
    adv = returns - values.detach()
    loss = -(Categorical(logits=logits).log_prob(actions) * adv).mean()
    loss = loss + 0.5 * F.mse_loss(values, returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def train(policy: RecurrentActorCritic, env, iterations: int, num_steps: int = 128) -> None:
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    obs, hidden = env.reset(), torch.zeros(env.num_envs, policy.gru.hidden_size)
    for it in range(iterations):
        rollout, obs, hidden = collect(policy, env, obs, hidden, num_steps)
        print(f"iter {it}: loss {update(policy, optimizer, rollout):.4f}")
