import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=128):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.actor = nn.Linear(hidden, act_dim)
        self.critic = nn.Linear(hidden, 1)
        self.hidden_trace = []
        self.hx = None

    def reset_state(self, batch_size, device=None):
        self.hx = torch.zeros(batch_size, self.cell.hidden_size, device=device)

    def forward(self, obs):
        z = F.relu(self.encoder(obs))
        h = self.cell(z, self.hx)
        self.hx = h.detach()
        self.hidden_trace += [h]  # leak
        return self.actor(h), self.critic(h).squeeze(-1)


def rollout_and_update(policy, env_step, optimizer, horizon=128, n_envs=8, obs_dim=17):
    policy.reset_state(n_envs)
    obs = torch.zeros(n_envs, obs_dim)
    log_probs, values, rewards = [], [], []
    for t in range(horizon):
        logits, value = policy(obs)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        obs, reward = env_step(action)
        log_probs.append(dist.log_prob(action))
        values.append(value)
        rewards.append(reward)
    returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
    advantage = returns - torch.stack(values)
    loss = -(torch.stack(log_probs) * advantage.detach()).mean() + 0.5 * advantage.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
