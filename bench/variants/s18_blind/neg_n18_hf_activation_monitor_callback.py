"""TrainerCallback that reports activation statistics of selected sub-modules.

Usage::

    trainer = Trainer(..., callbacks=[ActivationStatsCallback(patterns=("mlp.act", "attn.o_proj"))])

Statistics (mean, std, fraction of near-zero values, max |x|) are pushed into
the Trainer's log dict on every ``logging_steps`` so they appear in W&B /
TensorBoard next to the loss.
"""
import fnmatch
import logging

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


def _first_tensor(output):
    if torch.is_tensor(output):
        return output
    if isinstance(output, (tuple, list)) and output and torch.is_tensor(output[0]):
        return output[0]
    if hasattr(output, "last_hidden_state"):
        return output.last_hidden_state
    return None


class ActivationStatsCallback(TrainerCallback):
    def __init__(self, patterns=("*.mlp.act_fn", "*.self_attn.o_proj"), max_modules=16, sample_every=1):
        self.patterns = patterns
        self.max_modules = max_modules
        self.sample_every = sample_every
        self._handles = []
        self._acts = {}
        self._calls = 0

    # ------------------------------------------------------------------ hooks
    def _make_hook(self, name):
        def hook(module, inputs, output):
            if not module.training:
                return
            self._calls += 1
            if self._calls % self.sample_every:
                return
            t = _first_tensor(output)
            if t is not None:
                self._acts[name] = t.detach()
        return hook

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, model=None, **kwargs):
        selected = []
        for name, module in model.named_modules():
            if any(fnmatch.fnmatch(name, p) for p in self.patterns):
                selected.append((name, module))
        for name, module in selected[: self.max_modules]:
            self._handles.append(module.register_forward_hook(self._make_hook(name)))
        logger.info("ActivationStatsCallback: watching %d modules", len(self._handles))

    def on_train_end(self, args, state, control, **kwargs):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._acts.clear()

    # ---------------------------------------------------------------- logging
    @staticmethod
    def _stats(t: torch.Tensor):
        return {
            "mean": t.mean().item(),
            "std": t.std().item(),
            "zero_frac": (t.abs() < 1e-6).float().mean().item(),
            "absmax": t.abs().max().item(),
        }

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or not self._acts:
            return
        for name, act in self._acts.items():
            for k, v in self._stats(act.float()).items():
                logs[f"act/{name}/{k}"] = round(v, 5)


if __name__ == "__main__":
    from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, DataCollatorForLanguageModeling
    from datasets import load_dataset

    tok = AutoTokenizer.from_pretrained("Qwen/Qwen2-0.5B")
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B")
    ds = load_dataset("roneneldan/TinyStories", split="train[:2%]")
    ds = ds.map(lambda b: tok(b["text"], truncation=True, max_length=512), batched=True, remove_columns=["text"])
    trainer = Trainer(
        model=model,
        args=TrainingArguments("out-actstats", per_device_train_batch_size=8, logging_steps=20, max_steps=2000, report_to="none"),
        train_dataset=ds,
        data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
        callbacks=[ActivationStatsCallback(patterns=("model.layers.*.mlp.act_fn",))],
    )
    trainer.train()
