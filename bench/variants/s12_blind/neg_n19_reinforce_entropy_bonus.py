import gymnasium as gym
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 128) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))

    def forward(self, obs: torch.Tensor) -> Categorical:
        return Categorical(logits=self.net(obs))


def discounted_returns(rewards: list[float], gamma: float) -> torch.Tensor:
    R, out = 0.0, []
    for r in reversed(rewards):
        R = r + gamma * R
        out.insert(0, R)
    ret = torch.tensor(out)
    return (ret - ret.mean()) / (ret.std() + 1e-8)


def reinforce(env_id: str = "CartPole-v1", episodes: int = 2000, gamma: float = 0.99, beta: float = 0.01) -> None:
    env = gym.make(env_id)
    policy = Policy(env.observation_space.shape[0], env.action_space.n)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    entropy_trace: list[float] = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        log_probs, entropies, rewards = [], [], []
        done = False
        while not done:
            dist = policy(torch.as_tensor(obs, dtype=torch.float32))
            action = dist.sample()
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            obs, reward, terminated, truncated, _ = env.step(action.item())
            rewards.append(float(reward))
            done = terminated or truncated
        returns = discounted_returns(rewards, gamma)
        entropy = torch.stack(entropies).mean()
        loss = -(torch.stack(log_probs) * returns).sum() - beta * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        entropy_trace.append(entropy.item())
        if ep % 50 == 0:
            recent = entropy_trace[-50:]
            print(f"ep {ep} return {sum(rewards):.0f} entropy {sum(recent) / len(recent):.3f}")
