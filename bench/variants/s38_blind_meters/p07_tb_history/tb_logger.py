import json
import os
from collections import defaultdict

from torch.utils.tensorboard import SummaryWriter


class TensorboardLogger(object):
    """Thin wrapper around SummaryWriter that also keeps the scalar series
    so they can be dumped to json next to the checkpoints."""

    def __init__(self, log_dir, flush_secs=30):
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self.writer = SummaryWriter(log_dir=log_dir, flush_secs=flush_secs)
        self.history = defaultdict(list)

    def scalar_summary(self, tag, value, step):
        self.writer.add_scalar(tag, value, step)
        self.history[tag].append((step, value))  # leak

    def scalars_summary(self, main_tag, tag_value_dict, step):
        for tag, value in tag_value_dict.items():
            self.scalar_summary('%s/%s' % (main_tag, tag), value, step)

    def image_summary(self, tag, images, step, nrow=8):
        from torchvision.utils import make_grid
        grid = make_grid(images, nrow=nrow, normalize=True, value_range=(-1, 1))
        self.writer.add_image(tag, grid, step)

    def histo_summary(self, model, step):
        for name, param in model.named_parameters():
            self.writer.add_histogram(name.replace('.', '/'), param.detach().cpu(), step)

    def dump_json(self, filename='scalars.json'):
        out = {tag: [[s, float(v)] for s, v in series] for tag, series in self.history.items()}
        with open(os.path.join(self.log_dir, filename), 'w') as f:
            json.dump(out, f)

    def close(self):
        self.dump_json()
        self.writer.close()
