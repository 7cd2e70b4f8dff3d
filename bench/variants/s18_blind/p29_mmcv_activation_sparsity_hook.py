# Copyright (c) OpenMMLab-style downstream project.
"""Logs the fraction of zero activations after every ReLU of the backbone.

Enabled in configs with::

    custom_hooks = [dict(type='ReLUSparsityHook', interval=50)]

Statistics are only gathered on logging iterations to keep overhead low.
"""
import torch.nn as nn
from mmcv.runner import HOOKS, Hook
from mmcv.runner.dist_utils import master_only


def _sparsity(t):
    return (t == 0).float().mean().item()


@HOOKS.register_module()
class ReLUSparsityHook(Hook):
    """Record ReLU output sparsity.

    Args:
        interval (int): Gather statistics every ``interval`` iterations.
        module_prefix (str): Only modules whose name starts with this prefix
            are watched (default: the backbone).
        max_modules (int): Cap on the number of watched ReLUs.
    """

    def __init__(self, interval=50, module_prefix='backbone', max_modules=64):
        self.interval = interval
        self.module_prefix = module_prefix
        self.max_modules = max_modules
        self._stats = {}

    def _relus(self, model):
        if hasattr(model, 'module'):
            model = model.module
        found = []
        for name, m in model.named_modules():
            if name.startswith(self.module_prefix) and isinstance(m, (nn.ReLU, nn.ReLU6)):
                found.append((name, m))
                if len(found) >= self.max_modules:
                    break
        return found

    def _make_recorder(self, name):
        def _record(module, inputs, output):
            self._stats[name] = _sparsity(output.detach())
        return _record

    def before_train_iter(self, runner):
        if not self.every_n_iters(runner, self.interval):
            return
        self._stats.clear()
        for name, relu in self._relus(runner.model):
            relu.register_forward_hook(self._make_recorder(name))  # leak

    @master_only
    def after_train_iter(self, runner):
        if not self.every_n_iters(runner, self.interval) or not self._stats:
            return
        mean_sparsity = sum(self._stats.values()) / len(self._stats)
        runner.log_buffer.update({'relu_sparsity': mean_sparsity})
        deepest = list(self._stats.items())[-3:]
        for name, val in deepest:
            short = name.replace(self.module_prefix + '.', '')
            runner.log_buffer.update({f'sparsity/{short}': val})

    def after_run(self, runner):
        self._stats.clear()


def add_to_cfg(cfg, interval=50):
    """Helper used by tools/train.py --watch-sparsity."""
    hooks = list(cfg.get('custom_hooks', []))
    if not any(h.get('type') == 'ReLUSparsityHook' for h in hooks):
        hooks.append(dict(type='ReLUSparsityHook', interval=interval, priority='LOW'))
    cfg.custom_hooks = hooks
    return cfg


if __name__ == '__main__':
    import argparse
    from mmcv import Config

    p = argparse.ArgumentParser()
    p.add_argument('config')
    p.add_argument('--interval', type=int, default=50)
    a = p.parse_args()
    c = add_to_cfg(Config.fromfile(a.config), a.interval)
    print(c.pretty_text)
