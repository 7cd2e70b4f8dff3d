# Copyright (c) OpenMMLab-style project. All rights reserved.
"""Text logger hook with an internal log buffer.

The runner calls ``after_train_iter`` once per iteration with the dict the model's
``train_step`` returned; every ``interval`` iterations the hook averages what it
buffered and prints a line.
"""
import datetime
import logging
import os.path as osp
import time
from collections import OrderedDict, defaultdict, deque

logger = logging.getLogger("mmtrain")


class LogBuffer:
    """Holds the last ``maxlen`` values of every logged variable, keyed by name."""

    def __init__(self, maxlen=100):
        self.maxlen = maxlen
        self.val_history = defaultdict(lambda: deque(maxlen=self.maxlen))
        self.n_history = defaultdict(lambda: deque(maxlen=self.maxlen))
        self.output = OrderedDict()
        self.ready = False

    def clear_output(self):
        self.output.clear()
        self.ready = False

    def update(self, vars, count=1):
        assert isinstance(vars, dict)
        for key, var in vars.items():
            self.val_history[key].append(var)
            self.n_history[key].append(count)

    def average(self, n=0):
        """Average the latest ``n`` values (all values when ``n == 0``)."""
        assert n >= 0
        for key in self.val_history:
            values = list(self.val_history[key])[-n:]
            nums = list(self.n_history[key])[-n:]
            total = sum(v * c for v, c in zip(values, nums))
            self.output[key] = float(total / sum(nums))
        self.ready = True


class Hook:
    priority = "NORMAL"

    def before_run(self, runner): pass
    def after_run(self, runner): pass
    def before_train_iter(self, runner, batch_idx, data_batch=None): pass
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None): pass


class TextLoggerHook(Hook):
    priority = "VERY_LOW"

    def __init__(self, interval=10, ignore_last=True, by_epoch=False, out_dir=None):
        self.interval = interval
        self.ignore_last = ignore_last
        self.by_epoch = by_epoch
        self.out_dir = out_dir
        self.buffer = LogBuffer(maxlen=max(interval, 1))
        self._t0 = None
        self._iter_time = 0.0

    def before_run(self, runner):
        self._t0 = time.time()
        if self.out_dir is None:
            self.out_dir = runner.work_dir
        self.json_log_path = osp.join(self.out_dir, f"{runner.timestamp}.log.json")

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self._iter_start = time.time()

    @staticmethod
    def _collect_scalars(outputs):
        """Pull the per-loss scalars out of the model outputs as python floats."""
        scalars = OrderedDict()
        for name, value in outputs.get("log_vars", {}).items():
            if hasattr(value, "item"):
                value = value.item()
            scalars[name] = float(value)
        return scalars

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if outputs is None:
            return
        self._iter_time = time.time() - self._iter_start
        scalars = self._collect_scalars(outputs)
        scalars["time"] = self._iter_time
        self.buffer.update(scalars, outputs.get("num_samples", 1))

        if (runner.iter + 1) % self.interval != 0:
            return
        self.buffer.average(self.interval)
        self._log_info(runner, dict(self.buffer.output))
        self.buffer.clear_output()

    def _log_info(self, runner, log_dict):
        lr = runner.optimizer.param_groups[0]["lr"]
        eta_sec = log_dict["time"] * (runner.max_iters - runner.iter - 1)
        eta = str(datetime.timedelta(seconds=int(eta_sec)))
        items = [f"{k}: {v:.4f}" for k, v in log_dict.items() if k != "time"]
        logger.info("Iter [%d/%d]  lr: %.3e, eta: %s, time: %.3f, %s",
                    runner.iter + 1, runner.max_iters, lr, eta, log_dict["time"], ", ".join(items))

    def after_run(self, runner):
        elapsed = time.time() - self._t0
        logger.info("training finished in %s", datetime.timedelta(seconds=int(elapsed)))
