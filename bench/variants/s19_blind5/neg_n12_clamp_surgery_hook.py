"""Runtime model-surgery hooks for the runner.

``OutputClampHook`` clamps the outputs of selected layers to a finite range,
which stabilises fp16 training of very deep post-LN transformers.  Hooks are
installed once before the run; if another hook replaces modules (structured
pruning, ``LayerDropHook``) it calls :meth:`OutputClampHook.refresh`, which
removes the old handles before resolving the targets again.
"""
from __future__ import annotations

import fnmatch
import logging
from typing import Any, Dict, List, Optional, Sequence

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

logger = logging.getLogger("runner.hooks")

HOOKS: Dict[str, type] = {}


def register_hook(cls):
    HOOKS[cls.__name__] = cls
    return cls


class Hook:
    priority = 50

    def before_run(self, runner: "Runner") -> None: ...
    def after_run(self, runner: "Runner") -> None: ...
    def before_train_iter(self, runner: "Runner", batch_idx: int, data_batch: Any = None) -> None: ...
    def after_train_iter(self, runner: "Runner", batch_idx: int, data_batch: Any = None,
                         outputs: Optional[dict] = None) -> None: ...


def _match_modules(model: nn.Module, patterns: Sequence[str]) -> List[nn.Module]:
    return [m for name, m in model.named_modules() if any(fnmatch.fnmatch(name, p) for p in patterns)]


@register_hook
class OutputClampHook(Hook):
    priority = 20

    def __init__(self, patterns: Sequence[str] = ("*.ffn", "*.attn"), limit: float = 6.0e4,
                 log_interval: int = 100) -> None:
        self.patterns = list(patterns)
        self.limit = limit
        self.log_interval = log_interval
        self._clamped = 0
        self._handles: List[RemovableHandle] = []

    def _clamp(self, module: nn.Module, inputs, output):
        if isinstance(output, torch.Tensor) and output.is_floating_point():
            self._clamped += 1
            return output.clamp(-self.limit, self.limit)
        return output

    def _remove_handles(self) -> None:
        while self._handles:
            self._handles.pop().remove()

    def refresh(self, model: nn.Module) -> None:
        self._remove_handles()
        for module in _match_modules(model, self.patterns):
            self._handles.append(module.register_forward_hook(self._clamp))
        logger.info("OutputClampHook attached to %d modules", len(self._handles))

    def before_run(self, runner: "Runner") -> None:
        self.refresh(runner.model)

    def after_run(self, runner: "Runner") -> None:
        self._remove_handles()

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if runner.iter % self.log_interval == 0:
            logger.info("iter %d: clamp applied %d times", runner.iter, self._clamped)


@register_hook
class LossLoggerHook(Hook):
    priority = 90

    def __init__(self, interval: int = 50) -> None:
        self.interval = interval

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if outputs and runner.iter % self.interval == 0:
            logger.info("iter %d loss %.4f", runner.iter, outputs["loss"])


class Runner:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, loader,
                 max_iters: int, hook_cfgs: Optional[List[Dict[str, Any]]] = None) -> None:
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.max_iters = max_iters
        self.iter = 0
        self._hooks: List[Hook] = []
        for cfg in hook_cfgs or []:
            cfg = dict(cfg)
            self._hooks.append(HOOKS[cfg.pop("type")](**cfg))
        self._hooks.sort(key=lambda h: h.priority)

    def call_hook(self, fn_name: str, **kwargs) -> None:
        for h in self._hooks:
            getattr(h, fn_name)(self, **kwargs)

    def _train_iter(self, idx: int, data_batch) -> Dict[str, float]:
        src, tgt = data_batch
        self.call_hook("before_train_iter", batch_idx=idx, data_batch=data_batch)
        pred = self.model(src)
        err = nn.functional.mse_loss(pred, tgt)
        self.optimizer.zero_grad()
        err.backward()
        self.optimizer.step()
        outputs = {"loss": err.item()}
        self.call_hook("after_train_iter", batch_idx=idx, data_batch=data_batch, outputs=outputs)
        return outputs

    def train(self) -> None:
        self.call_hook("before_run")
        data_iter = iter(self.loader)
        while self.iter < self.max_iters:
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(self.loader)
                batch = next(data_iter)
            self._train_iter(self.iter, batch)
            self.iter += 1
        self.call_hook("after_run")


class _Layer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.attn = nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.ffn(x + self.attn(x)))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    net = nn.Sequential(*[_Layer(64) for _ in range(8)])
    data = [(torch.randn(32, 64), torch.randn(32, 64)) for _ in range(100)]
    runner = Runner(net, torch.optim.Adam(net.parameters(), 1e-3), data, max_iters=5000,
                    hook_cfgs=[{"type": "OutputClampHook", "patterns": ["*.attn", "*.ffn"]},
                               {"type": "LossLoggerHook"}])
    runner.train()
