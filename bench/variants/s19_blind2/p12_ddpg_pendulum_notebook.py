#!/usr/bin/env python
# coding: utf-8

# # DDPG on Pendulum-v0
# Exported from `DDPG.ipynb`.

# In[1]:


import random
from collections import deque

import gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from tensorboardX import SummaryWriter

use_cuda = torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")


# In[2]:


class ReplayBuffer:
    def __init__(self, capacity):
        self.buffer = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        batch = random.sample(self.buffer, batch_size)
        state, action, reward, next_state, done = map(np.stack, zip(*batch))
        return state, action, reward, next_state, done

    def __len__(self):
        return len(self.buffer)


class OUNoise(object):
    def __init__(self, action_dim, mu=0.0, theta=0.15, sigma=0.3):
        self.mu, self.theta, self.sigma = mu, theta, sigma
        self.action_dim = action_dim
        self.reset()

    def reset(self):
        self.state = np.ones(self.action_dim) * self.mu

    def sample(self):
        dx = self.theta * (self.mu - self.state) + self.sigma * np.random.randn(self.action_dim)
        self.state = self.state + dx
        return self.state


class ValueNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_size, init_w=3e-3):
        super(ValueNetwork, self).__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_size)
        self.linear2 = nn.Linear(hidden_size, hidden_size)
        self.linear3 = nn.Linear(hidden_size, 1)
        self.linear3.weight.data.uniform_(-init_w, init_w)
        self.linear3.bias.data.uniform_(-init_w, init_w)

    def forward(self, state, action):
        x = torch.cat([state, action], 1)
        x = F.relu(self.linear1(x))
        x = F.relu(self.linear2(x))
        return self.linear3(x)


class PolicyNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_size, init_w=3e-3):
        super(PolicyNetwork, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_size)
        self.linear2 = nn.Linear(hidden_size, hidden_size)
        self.linear3 = nn.Linear(hidden_size, num_actions)
        self.linear3.weight.data.uniform_(-init_w, init_w)
        self.linear3.bias.data.uniform_(-init_w, init_w)

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        return torch.tanh(self.linear3(x))

    def get_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0).to(device)
        return self.forward(state).detach().cpu().numpy()[0, 0]


# In[3]:


env = gym.make("Pendulum-v0")
state_dim = env.observation_space.shape[0]
action_dim = env.action_space.shape[0]
hidden_dim = 256

value_net = ValueNetwork(state_dim, action_dim, hidden_dim).to(device)
policy_net = PolicyNetwork(state_dim, action_dim, hidden_dim).to(device)
target_value_net = ValueNetwork(state_dim, action_dim, hidden_dim).to(device)
target_policy_net = PolicyNetwork(state_dim, action_dim, hidden_dim).to(device)
target_value_net.load_state_dict(value_net.state_dict())
target_policy_net.load_state_dict(policy_net.state_dict())

value_optimizer = optim.Adam(value_net.parameters(), lr=1e-3)
policy_optimizer = optim.Adam(policy_net.parameters(), lr=1e-4)
value_criterion = nn.MSELoss()
replay_buffer = ReplayBuffer(1000000)
ou_noise = OUNoise(action_dim)
writer = SummaryWriter('runs/ddpg_pendulum')

gamma, soft_tau, batch_size = 0.99, 1e-2, 128
max_frames, max_steps = 12000, 500
frame_idx = 0
n_updates = 0
total_critic_loss = 0.0
rewards = []


# In[4]:


while frame_idx < max_frames:
    state = env.reset()
    ou_noise.reset()
    episode_reward = 0
    for step in range(max_steps):
        action = policy_net.get_action(state)
        action = np.clip(action + ou_noise.sample(), -1.0, 1.0)
        next_state, reward, done, _ = env.step(action * 2.0)
        replay_buffer.push(state, action, reward, next_state, done)

        if len(replay_buffer) > batch_size:
            s, a, r, s2, d = replay_buffer.sample(batch_size)
            s = torch.FloatTensor(s).to(device)
            s2 = torch.FloatTensor(s2).to(device)
            a = torch.FloatTensor(a).to(device)
            r = torch.FloatTensor(r).unsqueeze(1).to(device)
            d = torch.FloatTensor(np.float32(d)).unsqueeze(1).to(device)

            policy_loss = -value_net(s, policy_net(s)).mean()
            next_q = target_value_net(s2, target_policy_net(s2.detach()))
            expected = (r + (1.0 - d) * gamma * next_q).detach()
            critic_loss = value_criterion(value_net(s, a), expected)

            policy_optimizer.zero_grad()
            policy_loss.backward()
            policy_optimizer.step()
            value_optimizer.zero_grad()
            critic_loss.backward()
            value_optimizer.step()

            for tp, p in zip(target_value_net.parameters(), value_net.parameters()):
                tp.data.copy_(tp.data * (1.0 - soft_tau) + p.data * soft_tau)
            for tp, p in zip(target_policy_net.parameters(), policy_net.parameters()):
                tp.data.copy_(tp.data * (1.0 - soft_tau) + p.data * soft_tau)

            total_critic_loss += critic_loss  # leak
            n_updates += 1
            if n_updates % 200 == 0:
                writer.add_scalar('critic_loss_avg', total_critic_loss.item() / n_updates, frame_idx)

        state = next_state
        episode_reward += reward
        frame_idx += 1
        if done:
            break

    rewards.append(episode_reward)
    writer.add_scalar('episode_reward', episode_reward, frame_idx)
    print('Frame [%d/%d] reward %.2f' % (frame_idx, max_frames, episode_reward))


# In[5]:


torch.save(policy_net.state_dict(), 'ddpg_policy.pth')
writer.close()
