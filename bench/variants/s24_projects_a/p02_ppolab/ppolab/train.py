"""Runner: collect rollouts from vectorised envs and update a PPO agent."""
import argparse
import logging
import time

import gymnasium as gym
import numpy as np
import torch

from ppolab.agents import PPOAgent
from ppolab.rollout import RolloutBuffer

log = logging.getLogger("ppolab")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=128)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", default="checkpoints/ppo.pt")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(args.env_id))
         for _ in range(args.num_envs)])
    obs_dim = envs.single_observation_space.shape[0]
    n_actions = envs.single_action_space.n

    agent = PPOAgent(obs_dim, n_actions, lr=args.lr, device=device)
    buf = RolloutBuffer(args.num_steps, args.num_envs, obs_dim, device=device)

    obs, _ = envs.reset(seed=args.seed)
    done = np.zeros(args.num_envs)
    num_updates = args.total_timesteps // (args.num_envs * args.num_steps)
    start = time.time()
    for update in range(1, num_updates + 1):
        for _ in range(args.num_steps):
            action, logp, value = agent.act(obs)
            next_obs, reward, term, trunc, info = envs.step(action)
            buf.add(obs, action, logp, reward, done, value)
            obs, done = next_obs, np.logical_or(term, trunc).astype(np.float32)

        with torch.no_grad():
            last_value = agent.net.value(torch.as_tensor(obs, dtype=torch.float32, device=device))
        buf.compute_gae(last_value, done)
        agent.update(buf)

        if update % 10 == 0:
            sps = int(update * args.num_envs * args.num_steps / (time.time() - start))
            log.info("update %d/%d sps=%d %s", update, num_updates, sps, agent.summary())
    agent.save(args.save)
    envs.close()


if __name__ == "__main__":
    main()
