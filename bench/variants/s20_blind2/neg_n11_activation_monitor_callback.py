"""Activation-scale monitoring for HF Trainer runs.

Registers one forward hook per monitored module at the start of training and
reports the RMS of each module's output averaged over the logging interval.
"""
import logging
import re
from dataclasses import dataclass
from typing import Dict, Optional

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


@dataclass
class RunningMean:
    total: float = 0.0
    count: int = 0

    def add(self, value: float) -> None:
        self.total += value
        self.count += 1

    @property
    def mean(self) -> float:
        return self.total / max(self.count, 1)


class IntervalStats:
    """Per-key running means for the current logging interval."""

    def __init__(self):
        self._acc: Dict[str, RunningMean] = {}

    def __setitem__(self, key: str, value: float) -> None:
        self._acc.setdefault(key, RunningMean()).add(float(value))

    def items(self):
        return self._acc.items()

    def clear(self):
        self._acc.clear()


@torch.no_grad()
def _rms(t) -> float:
    if isinstance(t, (tuple, list)):
        t = t[0]
    return t.detach().float().pow(2).mean().sqrt().item()


class ActivationMonitorCallback(TrainerCallback):
    def __init__(self, pattern: str = r"layers\.\d+\.mlp$", every: int = 10,
                 warn_threshold: float = 1e3):
        self.pattern = re.compile(pattern)
        self.every = every
        self.warn_threshold = warn_threshold
        self.stats = IntervalStats()
        self._handles = []
        self._step = 0

    def _make_hook(self, name):
        def hook(module, inputs, output):
            # .item() syncs, so only sample every few steps
            if module.training and self._step % self.every == 0:
                self.stats[name] = _rms(output)
        return hook

    def on_train_begin(self, args: TrainingArguments, state: TrainerState,
                       control: TrainerControl, model=None, **kwargs):
        for name, module in model.named_modules():
            if self.pattern.search(name):
                self._handles.append(module.register_forward_hook(self._make_hook(name)))
        logger.info("activation monitor attached to %d modules", len(self._handles))

    def on_step_end(self, args, state, control, **kwargs):
        self._step = state.global_step

    def on_log(self, args, state, control, logs: Optional[dict] = None, **kwargs):
        if logs is None:
            return
        for name, acc in sorted(self.stats.items()):
            logs[f"act_rms/{name}"] = round(acc.mean, 4)
            if acc.mean > self.warn_threshold:
                logger.warning("step %d: activation rms of %s is %.1f",
                               state.global_step, name, acc.mean)
        self.stats.clear()

    def on_train_end(self, args, state, control, **kwargs):
        for h in self._handles:
            h.remove()
        self._handles.clear()


if __name__ == "__main__":
    import argparse

    from datasets import load_dataset
    from transformers import (AutoModelForCausalLM, AutoTokenizer,
                              DataCollatorForLanguageModeling, Trainer)

    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="EleutherAI/pythia-410m")
    ap.add_argument("--out", default="runs/act-monitor")
    cli = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(cli.model)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(cli.model)
    raw = load_dataset("wikitext", "wikitext-103-raw-v1", split="train")
    ds = raw.map(lambda b: tok(b["text"], truncation=True, max_length=512), batched=True,
                 remove_columns=["text"])

    trainer = Trainer(
        model=model,
        args=TrainingArguments(cli.out, per_device_train_batch_size=8, fp16=True,
                               logging_steps=50, max_steps=20000, report_to=[]),
        train_dataset=ds,
        data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
        callbacks=[ActivationMonitorCallback(pattern=r"layers\.\d+\.mlp$")],
    )
    trainer.train()
