"""Episode bookkeeping wrapper for GPU-batched simulators (tensors in, tensors out, Isaac-style)."""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Tuple

import torch

log = logging.getLogger(__name__)

StepResult = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Dict[str, Any]]


class EpisodeStatsWrapper:
    """Tracks per-env returns/lengths on device and exposes rolling statistics to the trainer."""

    def __init__(self, env, stats_window: int = 100, clip_obs: float = 10.0):
        self.env = env
        self.num_envs: int = env.num_envs
        self.device = torch.device(env.device)
        self.stats_window = stats_window
        self.clip_obs = clip_obs
        self._ep_return = torch.zeros(self.num_envs, device=self.device)
        self._ep_length = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._completed: List[torch.Tensor] = []
        self.total_steps = 0

    @property
    def observation_space(self):
        return self.env.observation_space

    @property
    def action_space(self):
        return self.env.action_space

    def reset(self) -> torch.Tensor:
        obs = self.env.reset()
        self._ep_return.zero_()
        self._ep_length.zero_()
        return obs.clamp(-self.clip_obs, self.clip_obs)

    def _close_episodes(self, done_ids: torch.Tensor, infos: Dict[str, Any]) -> None:
        finished = torch.stack(
            [self._ep_return[done_ids], self._ep_length[done_ids].float()], dim=1)
        infos["episode"] = {"r": finished[:, 0], "l": finished[:, 1]}
        self._completed.append(finished)  # leak
        self._ep_return[done_ids] = 0.0
        self._ep_length[done_ids] = 0

    def step(self, actions: torch.Tensor) -> StepResult:
        actions = actions.clamp(-1.0, 1.0)
        obs, rewards, dones, infos = self.env.step(actions)
        self._ep_return += rewards
        self._ep_length += 1
        self.total_steps += self.num_envs

        timeouts = infos.get("time_outs")
        if timeouts is not None:
            infos["bootstrap_mask"] = timeouts.float()

        done_ids = dones.nonzero(as_tuple=False).flatten()
        if done_ids.numel() > 0:
            self._close_episodes(done_ids, infos)
        return obs.clamp(-self.clip_obs, self.clip_obs), rewards, dones, infos

    def episode_stats(self) -> Dict[str, float]:
        if not self._completed:
            return {}
        recent = torch.cat(self._completed)[-self.stats_window:]
        return {
            "rollout/ep_rew_mean": recent[:, 0].mean().item(),
            "rollout/ep_len_mean": recent[:, 1].mean().item(),
            "rollout/episodes": float(recent.shape[0]),
        }

    def close(self) -> None:
        log.info("closing env after %d steps", self.total_steps)
        self.env.close()


def collect(env: EpisodeStatsWrapper, policy, horizon: int, obs: torch.Tensor):
    """Fill one on-device rollout of `horizon` steps; returns the stacked tensors and last obs."""
    obs_buf, act_buf, rew_buf, done_buf, val_buf, logp_buf = [], [], [], [], [], []
    with torch.no_grad():
        for _ in range(horizon):
            action, log_prob, value = policy.act(obs)
            next_obs, rewards, dones, infos = env.step(action)
            obs_buf.append(obs)
            act_buf.append(action)
            rew_buf.append(rewards)
            done_buf.append(dones.float())
            val_buf.append(value)
            logp_buf.append(log_prob)
            obs = next_obs
    batch = {k: torch.stack(v) for k, v in zip(
        ("obs", "actions", "rewards", "dones", "values", "log_probs"),
        (obs_buf, act_buf, rew_buf, done_buf, val_buf, logp_buf))}
    return batch, obs
