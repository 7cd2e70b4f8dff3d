"""Activation-scale monitoring for HF Trainer runs.

Registers one forward hook per monitored module at the start of training and
reports the RMS of each module's output at every logging step, which helps
spot the fp16 overflow issue in the deeper layers early.
"""
import logging
import re
from collections import defaultdict
from typing import Dict, List, Optional

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


class SeriesStore:
    """dict-like container where assignment records a new point of a series."""

    def __init__(self):
        self._series: Dict[str, List] = defaultdict(list)

    def __setitem__(self, key, value):
        self._series[key].append(value)  # leak

    def __getitem__(self, key):
        return self._series[key][-1]

    def __contains__(self, key):
        return key in self._series

    def keys(self):
        return self._series.keys()

    def window(self, key, n):
        return self._series[key][-n:]


def _rms(t):
    if isinstance(t, (tuple, list)):
        t = t[0]
    return t.float().pow(2).mean().sqrt()


class ActivationMonitorCallback(TrainerCallback):
    def __init__(self, pattern: str = r"layers\.\d+\.mlp$", smoothing: int = 20,
                 warn_threshold: float = 1e3):
        self.pattern = re.compile(pattern)
        self.smoothing = smoothing
        self.warn_threshold = warn_threshold
        self.store = SeriesStore()
        self._handles = []

    def _make_hook(self, name):
        def hook(module, inputs, output):
            if module.training:
                self.store[name] = _rms(output)
        return hook

    def on_train_begin(self, args: TrainingArguments, state: TrainerState,
                       control: TrainerControl, model=None, **kwargs):
        for name, module in model.named_modules():
            if self.pattern.search(name):
                self._handles.append(module.register_forward_hook(self._make_hook(name)))
        logger.info("activation monitor attached to %d modules", len(self._handles))

    def on_log(self, args, state, control, logs: Optional[dict] = None, **kwargs):
        if logs is None:
            return
        for name in sorted(self.store.keys()):
            vals = self.store.window(name, self.smoothing)
            if not vals:
                continue
            rms = torch.stack([v.detach() for v in vals]).mean().item()
            logs[f"act_rms/{name}"] = round(rms, 4)
            if rms > self.warn_threshold:
                logger.warning("step %d: activation rms of %s is %.1f", state.global_step, name, rms)

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
    ap.add_argument("--dataset", default="wikitext")
    ap.add_argument("--config", default="wikitext-103-raw-v1")
    ap.add_argument("--out", default="runs/act-monitor")
    cli = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(cli.model)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(cli.model)
    raw = load_dataset(cli.dataset, cli.config, split="train")
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
