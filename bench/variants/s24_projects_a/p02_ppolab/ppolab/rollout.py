"""Fixed-size on-policy rollout storage with GAE."""
import torch


class RolloutBuffer:
    """Pre-allocated storage for ``num_steps`` x ``num_envs`` transitions.

    The buffer is overwritten in place every rollout, so its footprint is constant.
    """

    def __init__(self, num_steps: int, num_envs: int, obs_dim: int, device="cpu"):
        self.num_steps, self.num_envs = num_steps, num_envs
        self.device = device
        self.obs = torch.zeros(num_steps, num_envs, obs_dim, device=device)
        self.actions = torch.zeros(num_steps, num_envs, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(num_steps, num_envs, device=device)
        self.rewards = torch.zeros(num_steps, num_envs, device=device)
        self.dones = torch.zeros(num_steps, num_envs, device=device)
        self.values = torch.zeros(num_steps, num_envs, device=device)
        self.advantages = torch.zeros(num_steps, num_envs, device=device)
        self.returns = torch.zeros(num_steps, num_envs, device=device)
        self.ptr = 0

    def add(self, obs, actions, logprobs, rewards, dones, values) -> None:
        t = self.ptr
        self.obs[t] = torch.as_tensor(obs, device=self.device)
        self.actions[t] = torch.as_tensor(actions, device=self.device)
        self.logprobs[t] = logprobs
        self.rewards[t] = torch.as_tensor(rewards, device=self.device)
        self.dones[t] = torch.as_tensor(dones, device=self.device)
        self.values[t] = values
        self.ptr = (self.ptr + 1) % self.num_steps

    @torch.no_grad()
    def compute_gae(self, last_value, last_done, gamma=0.99, lam=0.95) -> None:
        lastgaelam = 0
        for t in reversed(range(self.num_steps)):
            if t == self.num_steps - 1:
                nonterminal = 1.0 - torch.as_tensor(last_done, dtype=torch.float32, device=self.device)
                next_values = last_value
            else:
                nonterminal = 1.0 - self.dones[t + 1]
                next_values = self.values[t + 1]
            delta = self.rewards[t] + gamma * next_values * nonterminal - self.values[t]
            lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
            self.advantages[t] = lastgaelam
        self.returns.copy_(self.advantages + self.values)

    def flatten(self) -> dict:
        return {
            "obs": self.obs.reshape(-1, self.obs.shape[-1]),
            "actions": self.actions.reshape(-1),
            "logprobs": self.logprobs.reshape(-1),
            "advantages": self.advantages.reshape(-1),
            "returns": self.returns.reshape(-1),
        }
