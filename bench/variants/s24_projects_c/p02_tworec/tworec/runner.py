"""A small epoch-based runner in the style of mmengine.runner.Runner."""
import logging
from typing import Dict, List, Optional

import torch
from torch.utils.data import DataLoader

logger = logging.getLogger(__name__)


class Runner:
    def __init__(self, model: torch.nn.Module, train_dataloader: DataLoader,
                 optimizer: torch.optim.Optimizer, max_epochs: int,
                 hooks: Optional[List] = None, param_scheduler=None, device: str = "cuda",
                 val_dataloader: Optional[DataLoader] = None, val_fn=None):
        self.model = model.to(device)
        self.train_dataloader = train_dataloader
        self.val_dataloader = val_dataloader
        self.val_fn = val_fn
        self.optimizer = optimizer
        self.param_scheduler = param_scheduler
        self.max_epochs = max_epochs
        self.device = device
        self.epoch = 0
        self.iter = 0
        self.message_hub: Dict[str, float] = {}
        self._hooks: List = []
        for h in hooks or []:
            self.register_hook(h)

    def register_hook(self, hook) -> None:
        """Insert a hook keeping the list sorted by priority (lower runs first)."""
        idx = len(self._hooks)
        for i, existing in enumerate(self._hooks):
            if hook.priority < existing.priority:
                idx = i
                break
        self._hooks.insert(idx, hook)

    def call_hook(self, fn_name: str, **kwargs) -> None:
        for hook in self._hooks:
            getattr(hook, fn_name)(self, **kwargs)

    def _to_device(self, batch: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    def run_iter(self, batch_idx: int, data_batch) -> Dict[str, torch.Tensor]:
        self.call_hook("before_train_iter", batch_idx=batch_idx, data_batch=data_batch)
        batch = self._to_device(data_batch)
        outputs = self.model(batch, mode="loss")
        self.optimizer.zero_grad(set_to_none=True)
        outputs["loss"].backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
        self.optimizer.step()
        self.call_hook("after_train_iter", batch_idx=batch_idx, data_batch=data_batch, outputs=outputs)
        self.iter += 1
        return outputs

    def train(self) -> torch.nn.Module:
        self.call_hook("before_run")
        while self.epoch < self.max_epochs:
            self.model.train()
            self.call_hook("before_train_epoch")
            for batch_idx, data_batch in enumerate(self.train_dataloader):
                self.run_iter(batch_idx, data_batch)
            if self.param_scheduler is not None:
                self.param_scheduler.step()
            self.call_hook("after_train_epoch")
            if self.val_dataloader is not None and self.val_fn is not None:
                self.validate()
            self.epoch += 1
        self.call_hook("after_run")
        return self.model

    @torch.no_grad()
    def validate(self) -> float:
        self.model.eval()
        scores = [self.val_fn(self.model, self._to_device(b)) for b in self.val_dataloader]
        recall = sum(scores) / max(len(scores), 1)
        logger.info("Epoch(val) [%d] recall@10: %.4f", self.epoch, recall)
        return recall
