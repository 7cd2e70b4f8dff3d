import random
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


def optimize_model(policy_net, target_net, memory, optimizer, batch_size=128, gamma=0.99):
    if len(memory) < batch_size:
        return
    batch = Transition(*zip(*memory.sample(batch_size)))
    non_final = torch.tensor([s is not None for s in batch.next_state], device=batch.reward[0].device)
    non_final_next = torch.cat([s for s in batch.next_state if s is not None])
    state_action = policy_net(torch.cat(batch.state)).gather(1, torch.cat(batch.action))
    next_values = torch.zeros(batch_size, device=non_final.device)
    with torch.no_grad():
        next_values[non_final] = target_net(non_final_next).max(1).values
    expected = torch.cat(batch.reward) + gamma * next_values
    loss = F.smooth_l1_loss(state_action, expected.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()


def run(env, policy_net, target_net, select_action, num_episodes=600, device="cuda"):
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-4, amsgrad=True)
    memory = ReplayMemory(10000)
    for episode in range(num_episodes):
        obs, _ = env.reset()
        state = torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        done = False
        while not done:
            action = select_action(state)
            obs, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            done = terminated or truncated
            next_state = None if terminated else torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model(policy_net, target_net, memory, optimizer)
