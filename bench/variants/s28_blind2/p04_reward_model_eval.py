"""Pairwise accuracy of a reward model on held-out preference data.

Run periodically from the RM training loop through ``RewardEvalCallback``.
Batches that do not fit in memory (very long chosen/rejected pairs) are
skipped and reported at the end of training instead of killing the job.
"""
import logging
from typing import Any, Dict, List

import torch
from transformers import TrainerCallback

logger = logging.getLogger(__name__)


class PreferenceEvaluator:
    def __init__(self, reward_model, eval_loader, device="cuda", max_failures_logged=20):
        self.reward_model = reward_model
        self.eval_loader = eval_loader
        self.device = torch.device(device)
        self.max_failures_logged = max_failures_logged
        self.failures: List[Dict[str, Any]] = []

    def _to_device(self, batch):
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    @torch.no_grad()
    def score_batch(self, batch):
        batch = self._to_device(batch)
        chosen = self.reward_model(
            input_ids=batch["chosen_input_ids"], attention_mask=batch["chosen_attention_mask"]
        ).logits.squeeze(-1)
        rejected = self.reward_model(
            input_ids=batch["rejected_input_ids"], attention_mask=batch["rejected_attention_mask"]
        ).logits.squeeze(-1)
        return chosen.float(), rejected.float()

    def _note_failure(self, step, batch_idx, batch, err):
        info = {
            "step": step,
            "batch": batch_idx,
            "max_len": int(batch["chosen_input_ids"].shape[1]),
            "error": err,
        }
        self.failures.append(info)  # leak
        if len(self.failures) <= self.max_failures_logged:
            logger.warning("eval batch %d skipped at step %d: %s", batch_idx, step, err)

    def evaluate(self, step: int) -> Dict[str, float]:
        was_training = self.reward_model.training
        self.reward_model.eval()
        correct, total, margin_sum = 0, 0, 0.0
        for batch_idx, batch in enumerate(self.eval_loader):
            try:
                chosen, rejected = self.score_batch(batch)
            except torch.cuda.OutOfMemoryError as err:
                self._note_failure(step, batch_idx, batch, err)
                torch.cuda.empty_cache()
                continue
            correct += (chosen > rejected).sum().item()
            margin_sum += (chosen - rejected).sum().item()
            total += chosen.numel()
        if was_training:
            self.reward_model.train()
        return {
            "eval/pair_accuracy": correct / max(total, 1),
            "eval/mean_margin": margin_sum / max(total, 1),
            "eval/skipped_batches": float(len(self.failures)),
        }


class RewardEvalCallback(TrainerCallback):
    def __init__(self, evaluator: PreferenceEvaluator, every_n_steps: int = 500):
        self.evaluator = evaluator
        self.every_n_steps = every_n_steps

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % self.every_n_steps == 0 and state.is_world_process_zero:
            metrics = self.evaluator.evaluate(state.global_step)
            logger.info("step %d: %s", state.global_step, metrics)
            state.log_history.append({**metrics, "step": state.global_step})
        return control

    def on_train_end(self, args, state, control, **kwargs):
        for info in self.evaluator.failures:
            logger.info("skipped: step=%(step)s batch=%(batch)s len=%(max_len)s", info)
        return control
