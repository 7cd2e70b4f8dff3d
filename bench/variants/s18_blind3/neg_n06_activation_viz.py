"""Utilities for visualising intermediate feature maps during training.

Example::

    viz = FeatureMapRecorder(model, layers=["layer2", "layer4"])
    ...  # train as usual; call viz.dump(writer, step) when you want images
"""
import logging

import torch
import torchvision.utils as vutils

logger = logging.getLogger(__name__)


def _to_grid(fmap, max_channels=16):
    # fmap: [C, H, W] -> normalised grid image
    fmap = fmap[:max_channels].unsqueeze(1).float()
    lo = fmap.amin(dim=(2, 3), keepdim=True)
    hi = fmap.amax(dim=(2, 3), keepdim=True)
    fmap = (fmap - lo) / (hi - lo + 1e-6)
    return vutils.make_grid(fmap, nrow=4, padding=1)


class FeatureMapRecorder:
    def __init__(self, model, layers, sample_index=0, enabled=True):
        self.model = model
        self.layers = list(layers)
        self.sample_index = sample_index
        self.enabled = enabled
        self.records = {}
        self._handles = []
        modules = dict(model.named_modules())
        for name in self.layers:
            if name not in modules:
                raise KeyError(f"no submodule named {name!r}")
            self._handles.append(modules[name].register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            if not self.enabled:
                return
            if isinstance(output, (tuple, list)):
                output = output[0]
            fmap = output[self.sample_index].detach()
            self.records[name] = fmap
        return hook

    def latest(self, name):
        return self.records.get(name)

    def dump(self, writer, step, tag="features"):
        for name in self.layers:
            fmap = self.latest(name)
            if fmap is None:
                continue
            writer.add_image(f"{tag}/{name}", _to_grid(fmap.cpu()), global_step=step)
        logger.debug("dumped feature maps for %d layers at step %d", len(self.layers), step)

    def close(self):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self.records.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
