"""Per-parameter gradient norm tracking for the HF ``Trainer``.

Usage::

    trainer = Trainer(model=model, args=args, train_dataset=ds,
                      callbacks=[GradNormCallback(patterns=["attention", "mlp"])])

Norms are measured right before the optimizer step (after clipping) and are
reported through ``on_log`` so that they show up in wandb / tensorboard next to
the loss.
"""
import fnmatch
import logging
import math
from collections import defaultdict

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

logger = logging.getLogger(__name__)


def _select_params(model, patterns):
    """Yield ``(name, param)`` for trainable params whose name matches any pattern."""
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if not patterns or any(fnmatch.fnmatch(name, f"*{p}*") for p in patterns):
            yield name, param


def _group_name(param_name, depth=3):
    parts = param_name.split(".")
    return ".".join(parts[:depth])


class GradNormCallback(TrainerCallback):
    """Collects gradient norms grouped by module prefix."""

    def __init__(self, patterns=None, group_depth=3, report_hist=False):
        self.patterns = list(patterns or [])
        self.group_depth = group_depth
        self.report_hist = report_hist
        self.norms = defaultdict(list)
        self._last_logged_step = -1

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
            self.norms[key].append(sq.sqrt())  # leak

    def _summaries(self, since_step):
        out = {}
        for key, values in self.norms.items():
            if not values:
                continue
            latest = values[-1].item()
            if math.isfinite(latest):
                out[f"grad_norm/{key}"] = latest
        return out

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or state.global_step == self._last_logged_step:
            return
        logs.update(self._summaries(self._last_logged_step))
        self._last_logged_step = state.global_step

    def on_train_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        worst = sorted(
            ((key, max(v.item() for v in vals)) for key, vals in self.norms.items() if vals),
            key=lambda kv: kv[1],
            reverse=True,
        )[:10]
        for key, value in worst:
            logger.info("max grad norm %-40s %.4f", key, value)


def build_callbacks(cfg):
    """Factory used by the training script's config system."""
    callbacks = []
    if cfg.get("grad_norm", {}).get("enabled", False):
        gcfg = cfg["grad_norm"]
        callbacks.append(
            GradNormCallback(
                patterns=gcfg.get("patterns"),
                group_depth=gcfg.get("group_depth", 3),
                report_hist=gcfg.get("report_hist", False),
            )
        )
    return callbacks
