"""Minimal fairseq-like Trainer wrapper used by our speech-translation experiments."""
import logging
import math
import sys
import time

import torch

logger = logging.getLogger(__name__)


class StopwatchMeter:
    def __init__(self):
        self.sum, self.n, self._start = 0.0, 0, None

    def start(self):
        self._start = time.perf_counter()

    def stop(self, n=1):
        if self._start is not None:
            self.sum += time.perf_counter() - self._start
            self.n += n
            self._start = None


class Trainer:
    def __init__(self, cfg, task, model, criterion):
        self.cfg = cfg
        self.task = task
        self.model = model.cuda()
        self.criterion = criterion.cuda()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98), eps=1e-8)
        self._num_updates = 0
        self.train_wall = StopwatchMeter()
        self.oom_count = 0

    def get_num_updates(self):
        return self._num_updates

    def zero_grad(self):
        self.optimizer.zero_grad(set_to_none=True)

    def _prepare_sample(self, sample):
        if sample is None or len(sample) == 0:
            return None
        return {k: (v.cuda(non_blocking=True) if torch.is_tensor(v) else v) for k, v in sample.items()}

    def _log_oom(self, exc):
        msg = "OOM: Ran out of memory with exception: {}".format(exc)
        logger.warning(msg)
        if torch.cuda.is_available():
            for dev in range(torch.cuda.device_count()):
                logger.warning(torch.cuda.memory_summary(device=dev))
        sys.stderr.flush()

    def clip_grad_norm(self, clip_norm):
        return torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip_norm)

    def train_step(self, samples, raise_oom=False):
        """Do forward, backward and parameter update over a list of (accumulated) samples."""
        self.model.train()
        self.criterion.train()
        self.zero_grad()
        self.train_wall.start()

        logging_outputs, sample_size = [], 0
        ooms = 0
        for i, sample in enumerate(samples):
            sample = self._prepare_sample(sample)
            try:
                loss, ssize, log_out = self.task.train_step(sample, self.model, self.criterion, self.optimizer,
                                                            self.get_num_updates())
                del loss
                logging_outputs.append(log_out)
                sample_size += ssize
            except RuntimeError as e:
                if "out of memory" not in str(e) or raise_oom:
                    raise
                self._log_oom(e)
                ooms += 1
                break

        if ooms > 0:
            # the exception (and the frames it referenced) is gone at this point
            logger.warning("attempting to recover from OOM in forward/backward pass")
            self.oom_count += ooms
            self.zero_grad()
            torch.cuda.empty_cache()
            return self.train_step(samples, raise_oom=True)

        try:
            for p in self.model.parameters():
                if p.grad is not None:
                    p.grad.data.mul_(1.0 / max(sample_size, 1))
            grad_norm = self.clip_grad_norm(self.cfg.clip_norm)
            if not math.isfinite(float(grad_norm)):
                raise FloatingPointError("gradients are Nan/Inf")
            self.optimizer.step()
            self._num_updates += 1
        except FloatingPointError:
            logger.info("NOTE: gradient overflow detected, ignoring gradient")
            self.zero_grad()
            grad_norm = None

        self.train_wall.stop()
        return self._reduce_logging_outputs(logging_outputs, grad_norm)

    def _reduce_logging_outputs(self, logging_outputs, grad_norm):
        agg = {}
        for lo in logging_outputs:
            for k, v in lo.items():
                agg[k] = agg.get(k, 0.0) + (float(v) if torch.is_tensor(v) else v)
        if grad_norm is not None:
            agg["gnorm"] = float(grad_norm)
        agg["num_updates"] = self._num_updates
        return agg

    @torch.no_grad()
    def valid_step(self, sample):
        self.model.eval()
        self.criterion.eval()
        sample = self._prepare_sample(sample)
        _, _, log_out = self.criterion(self.model, sample)
        return {k: (float(v) if torch.is_tensor(v) else v) for k, v in log_out.items()}


def train_epoch(trainer, epoch_itr, update_freq, log_interval=100):
    buffer = []
    for i, sample in enumerate(epoch_itr):
        buffer.append(sample)
        if len(buffer) < update_freq:
            continue
        stats = trainer.train_step(buffer)
        buffer = []
        if trainer.get_num_updates() % log_interval == 0:
            logger.info("epoch progress %d | %s", i, " | ".join(f"{k} {v:.3f}" for k, v in stats.items()))
