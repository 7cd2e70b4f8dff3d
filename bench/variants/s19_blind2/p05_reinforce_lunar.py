"""REINFORCE with baseline on LunarLander-v2.

Keeps a small per-step trace so that the action distributions of the
policy can be inspected after training (see notebooks/inspect_policy.ipynb).
"""
import argparse
import pickle
from itertools import count

import gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

parser = argparse.ArgumentParser(description='PyTorch REINFORCE example')
parser.add_argument('--gamma', type=float, default=0.99, metavar='G')
parser.add_argument('--seed', type=int, default=543, metavar='N')
parser.add_argument('--render', action='store_true')
parser.add_argument('--log-interval', type=int, default=10, metavar='N')
parser.add_argument('--max-episodes', type=int, default=3000)
parser.add_argument('--trace-out', default='policy_trace.pkl')
args = parser.parse_args()

env = gym.make('LunarLander-v2')
env.seed(args.seed)
torch.manual_seed(args.seed)
eps = np.finfo(np.float32).eps.item()


class StepTrace(object):
    """Collects what the agent saw and did, one entry per env step."""

    def __init__(self):
        self.records = []

    def add(self, **fields):
        self.records.append(fields)  # leak

    def dump(self, path):
        rows = []
        for r in self.records:
            rows.append({k: (v.detach().cpu().numpy() if torch.is_tensor(v) else v)
                         for k, v in r.items()})
        with open(path, 'wb') as f:
            pickle.dump(rows, f)


class Policy(nn.Module):
    def __init__(self, obs_dim=8, n_actions=4, hidden=128):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(obs_dim, hidden)
        self.dropout = nn.Dropout(p=0.6)
        self.action_head = nn.Linear(hidden, n_actions)
        self.value_head = nn.Linear(hidden, 1)

        self.saved_log_probs = []
        self.saved_values = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.action_head(x), dim=1), self.value_head(x)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=3e-3)
trace = StepTrace()


def select_action(state, episode, t):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs, value = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    policy.saved_values.append(value)
    trace.add(episode=episode, t=t, probs=probs, action=action.item())
    return action.item()


def finish_episode():
    R = 0
    policy_loss, value_loss = [], []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, value, R in zip(policy.saved_log_probs, policy.saved_values, returns):
        advantage = R - value.item()
        policy_loss.append(-log_prob * advantage)
        value_loss.append(F.smooth_l1_loss(value.squeeze(), R))
    optimizer.zero_grad()
    loss = torch.cat(policy_loss).sum() + torch.stack(value_loss).sum()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    del policy.saved_values[:]


def main():
    running_reward = 10
    for i_episode in count(1):
        state, ep_reward = env.reset(), 0
        for t in range(1, 1000):
            action = select_action(state, i_episode, t)
            state, reward, done, _ = env.step(action)
            if args.render:
                env.render()
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        finish_episode()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                i_episode, ep_reward, running_reward))
        if running_reward > env.spec.reward_threshold or i_episode >= args.max_episodes:
            print("Finished: running reward is now {} after {} episodes".format(
                running_reward, i_episode))
            break
    trace.dump(args.trace_out)


if __name__ == '__main__':
    main()
