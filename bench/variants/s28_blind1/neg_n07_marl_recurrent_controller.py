"""Parameter-shared recurrent actor-critic controller for cooperative multi-agent envs (MAPPO-style)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, Optional

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

log = logging.getLogger("marl.controller")


@dataclass
class ControllerConfig:
    obs_dim: int
    n_actions: int
    n_agents: int
    n_envs: int = 16
    hidden: int = 128
    rollout_len: int = 128
    device: str = "cuda"


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim: int, n_agents: int, n_actions: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(obs_dim + n_agents, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor, agent_ids: torch.Tensor, h: torch.Tensor):
        x = torch.relu(self.fc(torch.cat([obs, agent_ids], dim=-1)))
        h = self.gru(x, h)
        return self.pi(h), self.v(h).squeeze(-1), h


class MultiAgentController:
    """Owns the per-(env, agent) recurrent state used while collecting experience."""

    def __init__(self, policy: RecurrentPolicy, cfg: ControllerConfig):
        self.policy = policy.to(cfg.device)
        self.cfg = cfg
        n = cfg.n_envs * cfg.n_agents
        self._hidden = torch.zeros(n, cfg.hidden, device=cfg.device)
        self._agent_ids = torch.eye(cfg.n_agents, device=cfg.device).repeat(cfg.n_envs, 1)

    def _flatten(self, obs: np.ndarray) -> torch.Tensor:
        # [n_envs, n_agents, obs_dim] -> [n_envs * n_agents, obs_dim]
        return torch.as_tensor(obs, dtype=torch.float32, device=self.cfg.device).flatten(0, 1)

    def reset(self, env_ids: Optional[np.ndarray] = None) -> None:
        if env_ids is None:
            self._hidden = torch.zeros_like(self._hidden)
            return
        view = self._hidden.view(self.cfg.n_envs, self.cfg.n_agents, -1)
        view[torch.as_tensor(env_ids, device=self.cfg.device)] = 0.0

    def act(self, obs: np.ndarray, dones: np.ndarray, deterministic: bool = False) -> Dict[str, torch.Tensor]:
        masks = 1.0 - torch.as_tensor(dones, dtype=torch.float32, device=self.cfg.device)
        masks = masks.repeat_interleave(self.cfg.n_agents).unsqueeze(-1)
        h_in = self._hidden * masks
        logits, values, h_out = self.policy(self._flatten(obs), self._agent_ids, h_in)
        dist = Categorical(logits=logits)
        actions = logits.argmax(dim=-1) if deterministic else dist.sample()
        self._hidden = h_out.detach()
        return {
            "actions": actions.view(self.cfg.n_envs, self.cfg.n_agents),
            "values": values.detach(),
            "log_probs": dist.log_prob(actions).detach(),
            "h_in": h_in.detach(),
        }


class RolloutRunner:
    def __init__(self, envs, controller: MultiAgentController, buffer, cfg: ControllerConfig):
        self.envs, self.controller, self.buffer, self.cfg = envs, controller, buffer, cfg
        self.obs = envs.reset()
        self.dones = np.zeros(cfg.n_envs, dtype=np.float32)
        self.total_steps = 0

    def collect(self) -> Dict[str, float]:
        ep_rewards = []
        for _ in range(self.cfg.rollout_len):
            out = self.controller.act(self.obs, self.dones)
            next_obs, rewards, dones, infos = self.envs.step(out["actions"].cpu().numpy())
            self.buffer.add(obs=self.obs, h_in=out["h_in"], actions=out["actions"],
                            log_probs=out["log_probs"], values=out["values"],
                            rewards=rewards, dones=self.dones)
            for info in infos:
                if "episode" in info:
                    ep_rewards.append(info["episode"]["r"])
            self.obs, self.dones = next_obs, dones.astype(np.float32)
            self.total_steps += self.cfg.n_envs
        log.debug("collected %d steps (%d episodes finished)", self.total_steps, len(ep_rewards))
        return {"rollout/ep_reward": float(np.mean(ep_rewards)) if ep_rewards else float("nan")}
