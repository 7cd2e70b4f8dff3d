import torch
import torch.nn.functional as F
from torch import nn, Tensor


class ReplayBuffer:
    def __init__(self, obs_dim: int, act_dim: int, capacity: int = 1_000_000, device: str = "cuda"):
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.capacity = capacity
        self.storage = torch.empty(0, 2 * obs_dim + act_dim + 2, device=device)

    def __len__(self) -> int:
        return self.storage.size(0)

    def add(self, obs: Tensor, act: Tensor, rew: Tensor, next_obs: Tensor, done: Tensor) -> None:
        transition = torch.cat([obs, act, rew[:, None], next_obs, done[:, None].float()], dim=1)
        self.storage = torch.cat([self.storage, transition.detach()], dim=0)  # leak

    def sample(self, batch_size: int) -> tuple[Tensor, ...]:
        idx = torch.randint(0, len(self), (batch_size,), device=self.storage.device)
        batch = self.storage[idx]
        o, a = self.obs_dim, self.act_dim
        return (batch[:, :o], batch[:, o:o + a], batch[:, o + a], batch[:, o + a + 1:2 * o + a + 1],
                batch[:, -1])


def td_update(q_net: nn.Module, target_net: nn.Module, policy: nn.Module, buffer: ReplayBuffer,
              optimizer: torch.optim.Optimizer, gamma: float = 0.99, batch_size: int = 256) -> float:
    obs, act, rew, next_obs, done = buffer.sample(batch_size)
    with torch.no_grad():
        next_q = target_net(torch.cat([next_obs, policy(next_obs)], dim=-1)).squeeze(-1)
        target = rew + gamma * (1.0 - done) * next_q
    loss = F.mse_loss(q_net(torch.cat([obs, act], dim=-1)).squeeze(-1), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def run(env, q_net, target_net, policy, optimizer, total_steps: int, warmup: int = 10_000) -> None:
    buffer = ReplayBuffer(env.obs_dim, env.act_dim)
    obs = env.reset()
    for step in range(total_steps):
        with torch.no_grad():
            act = policy(obs) + 0.1 * torch.randn(obs.size(0), env.act_dim, device=obs.device)
        next_obs, rew, done = env.step(act)
        buffer.add(obs, act, rew, next_obs, done)
        obs = next_obs
        if step >= warmup:
            td_update(q_net, target_net, policy, buffer, optimizer)
