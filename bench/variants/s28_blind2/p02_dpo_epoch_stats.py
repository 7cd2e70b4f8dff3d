"""Direct Preference Optimization on paired (chosen, rejected) completions."""
import logging
from typing import Dict

import torch
import torch.nn.functional as F
from accelerate import Accelerator

logger = logging.getLogger(__name__)


class EpochStats:
    """Running per-epoch means of scalar diagnostics."""

    def __init__(self):
        self._sums: Dict[str, object] = {}
        self._counts: Dict[str, int] = {}

    def add(self, name: str, value) -> None:
        self._sums[name] = self._sums.get(name, 0.0) + value  # leak
        self._counts[name] = self._counts.get(name, 0) + 1

    def summary(self) -> Dict[str, float]:
        return {k: float(v) / max(self._counts[k], 1) for k, v in self._sums.items()}

    def reset(self) -> None:
        self._sums.clear()
        self._counts.clear()


def sequence_logps(logits, labels, ignore_index=-100):
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    mask = labels != ignore_index
    labels[~mask] = 0
    per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return (per_token * mask).sum(-1)


def token_entropy(logits, mask):
    logp = F.log_softmax(logits.float(), dim=-1)
    ent = -(logp.exp() * logp).sum(-1)
    return (ent * mask).sum() / mask.sum().clamp(min=1)


def dpo_loss(pol_chosen, pol_rejected, ref_chosen, ref_rejected, beta, label_smoothing=0.0):
    logits = (pol_chosen - pol_rejected) - (ref_chosen - ref_rejected)
    losses = (
        -F.logsigmoid(beta * logits) * (1 - label_smoothing)
        - F.logsigmoid(-beta * logits) * label_smoothing
    )
    chosen_rewards = beta * (pol_chosen - ref_chosen).detach()
    rejected_rewards = beta * (pol_rejected - ref_rejected).detach()
    return losses.mean(), chosen_rewards, rejected_rewards


class DPOTrainer:
    def __init__(self, policy, ref_model, optimizer, scheduler, train_loader, cfg):
        self.accelerator = Accelerator(gradient_accumulation_steps=cfg.get("grad_accum", 1))
        self.policy, self.optimizer, self.train_loader, self.scheduler = self.accelerator.prepare(
            policy, optimizer, train_loader, scheduler
        )
        self.ref_model = self.accelerator.prepare_model(ref_model, evaluation_mode=True)
        self.beta = cfg.get("beta", 0.1)
        self.label_smoothing = cfg.get("label_smoothing", 0.0)
        self.log_every = cfg.get("log_every", 20)
        self.stats = EpochStats()

    def concatenated_forward(self, model, batch):
        n = batch["chosen_input_ids"].shape[0]
        input_ids = torch.cat([batch["chosen_input_ids"], batch["rejected_input_ids"]], 0)
        attn = torch.cat([batch["chosen_attention_mask"], batch["rejected_attention_mask"]], 0)
        labels = torch.cat([batch["chosen_labels"], batch["rejected_labels"]], 0)
        logits = model(input_ids=input_ids, attention_mask=attn).logits
        logps = sequence_logps(logits, labels)
        return logps[:n], logps[n:], logits[:n], labels[:n]

    def training_step(self, batch) -> Dict[str, torch.Tensor]:
        pol_c, pol_r, chosen_logits, chosen_labels = self.concatenated_forward(self.policy, batch)
        with torch.no_grad():
            ref_c, ref_r, _, _ = self.concatenated_forward(self.ref_model, batch)
        loss, chosen_rewards, rejected_rewards = dpo_loss(
            pol_c, pol_r, ref_c, ref_r, self.beta, self.label_smoothing
        )
        mask = (chosen_labels[:, 1:] != -100).float()
        diagnostics = {
            "loss": loss.detach(),
            "rewards/margin": (chosen_rewards - rejected_rewards).mean(),
            "rewards/accuracy": (chosen_rewards > rejected_rewards).float().mean(),
            "policy/entropy": token_entropy(chosen_logits[:, :-1], mask),
        }
        with self.accelerator.accumulate(self.policy):
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
        return diagnostics

    def train_epoch(self, epoch: int) -> Dict[str, float]:
        self.policy.train()
        for step, batch in enumerate(self.train_loader):
            diagnostics = self.training_step(batch)
            for name, value in diagnostics.items():
                self.stats.add(name, value)
            if step % self.log_every == 0 and self.accelerator.is_main_process:
                logger.info("epoch %d step %d loss %.4f", epoch, step, diagnostics["loss"].item())
        summary = self.stats.summary()
        self.stats.reset()
        self.accelerator.log({f"epoch/{k}": v for k, v in summary.items()}, step=epoch)
        return summary
