"""Per-parameter gradient norm tracking for the HF ``Trainer``.

Usage::

    trainer = Trainer(model=model, args=args, train_dataset=ds,
                      callbacks=[GradNormCallback(patterns=["attention", "mlp"])])

Norms are measured right before the optimizer step (after clipping), converted
to python floats and kept in a small rolling window per group; ``on_log`` reports
the window mean/max and empties it.
"""
import fnmatch
import logging
import math
from collections import defaultdict, deque

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


def _select_params(model, patterns):
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if not patterns or any(fnmatch.fnmatch(name, f"*{p}*") for p in patterns):
            yield name, param


def _group_name(param_name, depth=3):
    return ".".join(param_name.split(".")[:depth])


class GradNormCallback(TrainerCallback):
    """Collects gradient norms grouped by module prefix."""

    def __init__(self, patterns=None, group_depth=3, window=100):
        self.patterns = list(patterns or [])
        self.group_depth = group_depth
        self.window = window
        self.norms = defaultdict(lambda: deque(maxlen=self.window))
        self.running_max = {}

    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs):
        model = kwargs.get("model")
        n = sum(1 for _ in _select_params(model, self.patterns))
        logger.info("GradNormCallback tracking %d parameter tensors", n)

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        model = kwargs["model"]
        per_group = {}
        for name, param in _select_params(model, self.patterns):
            if param.grad is None:
                continue
            key = _group_name(name, self.group_depth)
            sq = param.grad.detach().float().pow(2).sum()
            per_group[key] = per_group[key] + sq if key in per_group else sq
        for key, sq in per_group.items():
            value = sq.sqrt().item()
            self.norms[key].append(value)
            self.running_max[key] = max(self.running_max.get(key, 0.0), value)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None:
            return
        for key, values in self.norms.items():
            if not values:
                continue
            mean = sum(values) / len(values)
            if math.isfinite(mean):
                logs[f"grad_norm/{key}"] = mean
                logs[f"grad_norm_max/{key}"] = max(values)
            values.clear()

    def on_train_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        worst = sorted(self.running_max.items(), key=lambda kv: kv[1], reverse=True)[:10]
        for key, value in worst:
            logger.info("max grad norm %-40s %.4f", key, value)


def build_callbacks(cfg):
    callbacks = []
    if cfg.get("grad_norm", {}).get("enabled", False):
        gcfg = cfg["grad_norm"]
        callbacks.append(
            GradNormCallback(
                patterns=gcfg.get("patterns"),
                group_depth=gcfg.get("group_depth", 3),
                window=gcfg.get("window", 100),
            )
        )
    return callbacks
