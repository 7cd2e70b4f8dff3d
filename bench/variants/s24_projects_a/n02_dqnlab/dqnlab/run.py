"""Train a Double-DQN agent on a classic-control task."""
import argparse
import logging
from collections import deque

import gymnasium as gym
import numpy as np
import torch

from dqnlab.agents.dqn import DQNAgent
from dqnlab.replay import ReplayBuffer

log = logging.getLogger("dqnlab")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--buffer", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--learning-starts", type=int, default=1_000)
    ap.add_argument("--train-freq", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.manual_seed(args.seed)

    env = gym.make(args.env)
    obs_dim = env.observation_space.shape[0]
    agent = DQNAgent(obs_dim, env.action_space.n,
                     device="cuda" if torch.cuda.is_available() else "cpu")
    buffer = ReplayBuffer(args.buffer, obs_dim, seed=args.seed)
    returns = deque(maxlen=50)

    obs, _ = env.reset(seed=args.seed)
    ep_return = 0.0
    for t in range(args.steps):
        action = agent.act(obs, t)
        next_obs, reward, term, trunc, _ = env.step(action)
        buffer.add(obs, action, reward, next_obs, float(term))
        ep_return += reward
        obs = next_obs
        if term or trunc:
            returns.append(ep_return)
            ep_return = 0.0
            obs, _ = env.reset()

        if t >= args.learning_starts and t % args.train_freq == 0:
            agent.learn(buffer.sample(args.batch_size))

        if t % 5_000 == 0 and returns:
            log.info("t=%d eps=%.3f return=%.1f %s", t, agent.epsilon(t),
                     float(np.mean(returns)), agent.metric_means())
    agent.save("dqn_final.pt")


if __name__ == "__main__":
    main()
