from collections import defaultdict

import torch
import torch.nn as nn


class ActivationStats(object):
    """Records mean / std of every Conv / Linear output, in the spirit of the
    fastai `ActivationStats` callback, to spot dying or exploding layers."""

    def __init__(self, model, types=(nn.Conv2d, nn.Linear)):
        self.stats = defaultdict(list)
        self.handles = []
        self.names = []
        for name, module in model.named_modules():
            if isinstance(module, types):
                self.names.append(name)
                self.handles.append(module.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.stats[name].append(torch.stack([output.mean(), output.std()]))  # leak
        return hook

    def recent(self, name, n=50):
        s = self.stats[name][-n:]
        if not s:
            return None
        return torch.stack(s).detach().mean(0).tolist()

    def report(self, n=50):
        lines = []
        for name in self.names:
            r = self.recent(name, n)
            if r is not None:
                lines.append('  %-24s mean %+.4f  std %.4f' % (name, r[0], r[1]))
        return '\n'.join(lines)

    def dead_layers(self, n=50, eps=1e-3):
        out = []
        for name in self.names:
            r = self.recent(name, n)
            if r is not None and r[1] < eps:
                out.append(name)
        return out

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []
