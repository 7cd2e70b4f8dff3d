"""Trainer that skips batches producing non-finite losses instead of crashing.

Web-scraped pretraining corpora occasionally contain samples that blow up the
loss in fp16 (very long repeated tokens etc.). Rather than aborting a multi-day
run, the offending step is skipped and reported at the end of training.
"""
import logging
import math
from typing import Any, Dict, List, Tuple, Union

import torch
import torch.nn as nn
from transformers import Trainer, TrainerCallback

logger = logging.getLogger(__name__)


class NonFiniteLossError(FloatingPointError):
    pass


def check_finite(loss: torch.Tensor, step: int) -> torch.Tensor:
    if not torch.isfinite(loss).all():
        raise NonFiniteLossError(f"non-finite loss {loss.item()} at step {step}")
    return loss


class SkipBadBatchTrainer(Trainer):
    def __init__(self, *args, max_skips: int = 1000, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_skips = max_skips
        self.skipped_steps: List[Tuple[int, BaseException]] = []

    def training_step(
        self, model: nn.Module, inputs: Dict[str, Union[torch.Tensor, Any]], num_items_in_batch=None
    ) -> torch.Tensor:
        model.train()
        inputs = self._prepare_inputs(inputs)
        try:
            with self.compute_loss_context_manager():
                loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
            if self.args.n_gpu > 1:
                loss = loss.mean()
            check_finite(loss, self.state.global_step)
        except NonFiniteLossError as err:
            self.skipped_steps.append((self.state.global_step, err))  # leak
            if len(self.skipped_steps) > self.max_skips:
                raise RuntimeError(f"too many skipped steps ({len(self.skipped_steps)})") from err
            logger.warning("skipping batch at step %d: %s", self.state.global_step, err)
            model.zero_grad(set_to_none=True)
            return torch.zeros((), device=self.args.device)
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps


class SkipReportCallback(TrainerCallback):
    def __init__(self, trainer: SkipBadBatchTrainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is not None:
            logs["skipped_batches"] = len(self.trainer.skipped_steps)

    def on_train_end(self, args, state, control, **kwargs):
        skipped = self.trainer.skipped_steps
        if not skipped:
            return
        frac = len(skipped) / max(state.global_step, 1)
        logger.warning("%d batches skipped (%.3f%% of steps). First few:", len(skipped), 100 * frac)
        for step, err in skipped[:10]:
            logger.warning("  step %d: %s", step, err)


def perplexity_from_logs(log_history):
    losses = [e["loss"] for e in log_history if "loss" in e and math.isfinite(e["loss"])]
    return math.exp(sum(losses[-10:]) / max(1, len(losses[-10:]))) if losses else float("nan")


if __name__ == "__main__":
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, TrainingArguments

    logging.basicConfig(level=logging.INFO)
    tok = AutoTokenizer.from_pretrained("EleutherAI/pythia-410m")
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained("EleutherAI/pythia-410m")
    raw = load_dataset("allenai/c4", "en", split="train", streaming=True)
    ds = raw.map(lambda b: tok(b["text"], truncation=True, max_length=1024), batched=True, remove_columns=["text", "timestamp", "url"])
    args = TrainingArguments("out-c4", per_device_train_batch_size=16, fp16=True, max_steps=100_000, logging_steps=50, save_steps=5000)
    trainer = SkipBadBatchTrainer(model=model, args=args, train_dataset=ds, data_collator=DataCollatorForLanguageModeling(tok, mlm=False))
    trainer.add_callback(SkipReportCallback(trainer))
    trainer.train()
    print("final ppl ~", perplexity_from_logs(trainer.state.log_history))
