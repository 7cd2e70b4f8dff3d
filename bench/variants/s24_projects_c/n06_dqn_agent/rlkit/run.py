"""python -m rlkit.run --env LunarLander-v3 --steps 1000000"""
import argparse
import logging

import gymnasium as gym
import numpy as np

from rlkit.agent import DQNAgent
from rlkit.buffer import NStepAccumulator, ReplayBuffer

logger = logging.getLogger("rlkit")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="LunarLander-v3")
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--buffer", type=int, default=200_000)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--learn-start", type=int, default=10_000)
    ap.add_argument("--n-step", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    env = gym.make(args.env)
    obs, _ = env.reset(seed=args.seed)
    agent = DQNAgent(env.observation_space.shape[0], env.action_space.n, n_step=args.n_step)
    buffer = ReplayBuffer(args.buffer, seed=args.seed)
    nstep = NStepAccumulator(args.n_step, 0.99)

    ep_return, ep_len, episode, returns = 0.0, 0, 0, []
    for t in range(args.steps):
        action = agent.act(obs)
        try:
            next_obs, reward, terminated, truncated, _ = env.step(action)
        except (RuntimeError, ValueError) as exc:
            agent.record_error(exc)
            obs, _ = env.reset()
            continue
        done = terminated or truncated
        tr = nstep.push(obs, action, reward, next_obs, terminated)
        if tr is not None:
            buffer.add(*tr)
        ep_return += float(reward)
        ep_len += 1
        obs = next_obs

        if len(buffer) >= args.learn_start:
            agent.learn(buffer.sample(args.batch_size, agent.device))

        if done:
            episode += 1
            returns.append(ep_return)
            agent.record(ep_return=ep_return, ep_len=ep_len)
            if episode % 20 == 0:
                s = agent.summary()
                logger.info("ep %d t %d return(avg100) %.1f td %.4f eps %.3f", episode, t,
                            s["ep_return"], s.get("td_loss", float("nan")), agent.epsilon())
                returns = returns[-100:]
            ep_return, ep_len = 0.0, 0
            obs, _ = env.reset()
            nstep.window.clear()

    agent.save("checkpoints/dqn_final.pt")
    logger.info("final avg return %.1f", float(np.mean(returns)) if returns else float("nan"))


if __name__ == "__main__":
    main()
