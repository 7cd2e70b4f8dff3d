"""Minimal detectron2-flavoured trainer used for the toy detection experiments.

Subclasses can observe the loss dict through ``after_loss``; the base loop
flushes whatever was buffered to the metric log after every step.
"""
import argparse
import logging
import time
import weakref
from typing import Dict, List, Optional

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger("toydet.engine")


class HookBase:
    trainer = None

    def before_train(self):
        pass

    def after_train(self):
        pass

    def before_step(self):
        pass

    def after_step(self):
        pass


class TrainerBase:
    """Iteration-based training loop with hooks."""

    def __init__(self) -> None:
        self._hooks: List[HookBase] = []
        self.iter: int = 0
        self.start_iter: int = 0
        self.max_iter: int = 0
        # loss terms of the current step only; flushed in _write_metrics
        self._loss_history: List[Dict[str, torch.Tensor]] = []
        self.latest_metrics: Dict[str, float] = {}

    def register_hooks(self, hooks: List[Optional[HookBase]]) -> None:
        hooks = [h for h in hooks if h is not None]
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter: int, max_iter: int) -> None:
        logger.info("Starting training from iteration %d", start_iter)
        self.iter = self.start_iter = start_iter
        self.max_iter = max_iter
        for h in self._hooks:
            h.before_train()
        try:
            for self.iter in range(start_iter, max_iter):
                for h in self._hooks:
                    h.before_step()
                t0 = time.perf_counter()
                self.run_step()
                self._write_metrics(time.perf_counter() - t0)
                for h in self._hooks:
                    h.after_step()
            self.iter += 1
        finally:
            for h in self._hooks:
                h.after_train()

    def _write_metrics(self, step_time: float) -> None:
        merged: Dict[str, float] = {"time": step_time}
        for d in self._loss_history:
            for k, v in d.items():
                merged[k] = float(v)
        self.latest_metrics = merged
        self._loss_history.clear()

    def after_loss(self, loss_dict: Dict[str, torch.Tensor]) -> None:
        """Called once per step with the raw loss dict, before backward."""

    def run_step(self):
        raise NotImplementedError


class SimpleTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        model.train()
        self.model = model
        self.data_loader = data_loader
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def _next_batch(self):
        try:
            return next(self._data_loader_iter)
        except StopIteration:
            self._data_loader_iter = iter(self.data_loader)
            return next(self._data_loader_iter)

    def run_step(self):
        data = self._next_batch()
        loss_dict = self.model(*data)
        losses = sum(loss_dict.values())
        self.after_loss(loss_dict)
        self.optimizer.zero_grad()
        losses.backward()
        self.optimizer.step()


class LossCurveTrainer(SimpleTrainer):
    """Forwards the loss terms to the metric writer."""

    def after_loss(self, loss_dict):
        self._loss_history.append({k: v.detach() for k, v in loss_dict.items()})


class CurveWriter(HookBase):
    def __init__(self, period: int = 20):
        self.period = period
        self.curve: List[Dict[str, float]] = []

    def after_step(self):
        if (self.trainer.iter + 1) % self.period:
            return
        last = dict(self.trainer.latest_metrics)
        self.curve.append(last)
        msg = "  ".join(f"{k}: {v:.4f}" for k, v in last.items())
        logger.info("iter %d  %s", self.trainer.iter + 1, msg)

    def after_train(self):
        logger.info("recorded %d curve points", len(self.curve))


class ToyDetector(nn.Module):
    def __init__(self, in_dim=32, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, 64))
        self.cls_head = nn.Linear(64, num_classes)
        self.box_head = nn.Linear(64, 4)

    def forward(self, x, labels, boxes):
        feat = self.backbone(x)
        return {
            "loss_cls": nn.functional.cross_entropy(self.cls_head(feat), labels),
            "loss_box_reg": nn.functional.smooth_l1_loss(self.box_head(feat), boxes),
        }


def build_loader(n=2048, bs=32):
    ds = TensorDataset(torch.randn(n, 32), torch.randint(0, 5, (n,)), torch.rand(n, 4))
    return DataLoader(ds, batch_size=bs, shuffle=True, drop_last=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-iter", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    model = ToyDetector()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    trainer = LossCurveTrainer(model, build_loader(), opt)
    trainer.register_hooks([CurveWriter(period=50)])
    trainer.train(0, args.max_iter)


if __name__ == "__main__":
    main()
