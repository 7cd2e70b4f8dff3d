import json
import os
from collections import defaultdict

import torch
from torch.utils.tensorboard import SummaryWriter


class TensorboardLogger(object):
    """Thin wrapper around SummaryWriter that batches scalar writes and keeps
    a per-tag running mean so a compact json can be dumped at the end."""

    def __init__(self, log_dir, flush_every=100, flush_secs=30):
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self.writer = SummaryWriter(log_dir=log_dir, flush_secs=flush_secs)
        self.flush_every = flush_every
        self._pending = []
        self._sums = defaultdict(float)
        self._counts = defaultdict(int)

    def scalar_summary(self, tag, value, step):
        if isinstance(value, torch.Tensor):
            value = value.item()
        self._pending.append((tag, value, step))
        self._sums[tag] += value
        self._counts[tag] += 1
        if len(self._pending) >= self.flush_every:
            self.flush()

    def scalars_summary(self, main_tag, tag_value_dict, step):
        for tag, value in tag_value_dict.items():
            self.scalar_summary('%s/%s' % (main_tag, tag), value, step)

    def flush(self):
        for tag, value, step in self._pending:
            self.writer.add_scalar(tag, value, step)
        self._pending.clear()
        self.writer.flush()

    def image_summary(self, tag, images, step, nrow=8):
        from torchvision.utils import make_grid
        grid = make_grid(images, nrow=nrow, normalize=True, value_range=(-1, 1))
        self.writer.add_image(tag, grid, step)

    def histo_summary(self, model, step):
        for name, param in model.named_parameters():
            self.writer.add_histogram(name.replace('.', '/'), param.detach().cpu(), step)

    def dump_json(self, filename='scalars.json'):
        out = {tag: self._sums[tag] / self._counts[tag] for tag in self._sums}
        with open(os.path.join(self.log_dir, filename), 'w') as f:
            json.dump(out, f)

    def close(self):
        self.flush()
        self.dump_json()
        self.writer.close()
