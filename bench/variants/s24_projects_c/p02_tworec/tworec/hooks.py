"""Runner hooks, modelled on mmengine.hooks."""
import logging
import os
import time

import torch

logger = logging.getLogger(__name__)

DATA_BATCH = dict


class Hook:
    """Base class; subclasses override only the points they need."""

    priority = 50

    def before_run(self, runner):
        pass

    def after_run(self, runner):
        pass

    def before_train_epoch(self, runner):
        pass

    def after_train_epoch(self, runner):
        pass

    def before_train_iter(self, runner, batch_idx: int, data_batch: DATA_BATCH = None):
        pass

    def after_train_iter(self, runner, batch_idx: int, data_batch: DATA_BATCH = None, outputs=None):
        pass

    def every_n_iters(self, runner, n: int) -> bool:
        return n > 0 and (runner.iter + 1) % n == 0


class IterTimerHook(Hook):
    priority = 10

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self._t0 = time.perf_counter()

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        runner.message_hub["time"] = time.perf_counter() - self._t0


class LoggerHook(Hook):
    priority = 90

    def __init__(self, interval: int = 50):
        self.interval = interval

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if self.every_n_iters(runner, self.interval):
            lr = runner.optimizer.param_groups[0]["lr"]
            logger.info("Epoch(train) [%d][%d/%d] lr: %.2e loss: %.4f time: %.3f",
                        runner.epoch, batch_idx + 1, len(runner.train_dataloader), lr,
                        outputs["loss"].item(), runner.message_hub.get("time", 0.0))


class EmbeddingStatsHook(Hook):
    """Tracks the spread of user embeddings to detect representation collapse."""

    priority = 60

    def __init__(self, collapse_threshold: float = 0.05):
        self.collapse_threshold = collapse_threshold
        self._user_embs = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self._user_embs.append(outputs["user_emb"].detach())  # leak

    def after_train_epoch(self, runner):
        if not self._user_embs:
            return
        embs = torch.cat(self._user_embs, dim=0)
        spread = embs.std(dim=0).mean().item()
        runner.message_hub["user_emb_spread"] = spread
        if spread < self.collapse_threshold:
            logger.warning("user embeddings may be collapsing (mean std %.4f)", spread)


class CheckpointHook(Hook):
    priority = 70

    def __init__(self, interval: int = 1, out_dir: str = "work_dirs"):
        self.interval = interval
        self.out_dir = out_dir

    def after_train_epoch(self, runner):
        if (runner.epoch + 1) % self.interval:
            return
        os.makedirs(self.out_dir, exist_ok=True)
        path = os.path.join(self.out_dir, f"epoch_{runner.epoch + 1}.pth")
        torch.save({"state_dict": runner.model.state_dict(),
                    "optimizer": runner.optimizer.state_dict(),
                    "epoch": runner.epoch + 1}, path)
        logger.info("Saved checkpoint to %s", path)
