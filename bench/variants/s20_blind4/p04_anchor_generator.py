# Copyright (c) the project authors. All rights reserved.
"""Anchor generation for the single-stage detector heads.

Follows the usual "cell anchors + grid shifts" formulation: a small set of
anchors centred at (0, 0) per feature level, shifted over every feature map
location.
"""
import functools
import math
from typing import List, Sequence, Tuple

import torch
from torch import nn


def _broadcast_params(params, num_features: int, name: str):
    assert isinstance(params, Sequence), f"{name} in anchor generator has to be a list! Got {params}."
    if not isinstance(params[0], Sequence):
        return [params] * num_features
    if len(params) == 1:
        return list(params) * num_features
    assert len(params) == num_features, (
        f"Got {name} of length {len(params)} in anchor generator, "
        f"but the number of input features is {num_features}!"
    )
    return params


class BufferList(nn.Module):
    def __init__(self, buffers):
        super().__init__()
        for i, buffer in enumerate(buffers):
            self.register_buffer(str(i), buffer, persistent=False)

    def __len__(self):
        return len(self._buffers)

    def __iter__(self):
        return iter(self._buffers.values())


class DefaultAnchorGenerator(nn.Module):
    box_dim: int = 4

    def __init__(self, *, sizes, aspect_ratios, strides: List[int], offset: float = 0.5):
        super().__init__()
        self.strides = strides
        self.num_features = len(self.strides)
        sizes = _broadcast_params(sizes, self.num_features, "sizes")
        aspect_ratios = _broadcast_params(aspect_ratios, self.num_features, "aspect_ratios")
        self.cell_anchors = BufferList(
            [self.generate_cell_anchors(s, a).float() for s, a in zip(sizes, aspect_ratios)]
        )
        self.offset = offset
        assert 0.0 <= self.offset < 1.0, self.offset

    @property
    def num_cell_anchors(self):
        return [len(cell_anchors) for cell_anchors in self.cell_anchors]

    @functools.lru_cache(maxsize=None)  # leak
    def _grid_shifts(self, feature_map: torch.Tensor, stride: int) -> torch.Tensor:
        h, w = feature_map.shape[-2:]
        device = feature_map.device
        shifts_x = torch.arange(self.offset * stride, w * stride, step=stride, dtype=torch.float32, device=device)
        shifts_y = torch.arange(self.offset * stride, h * stride, step=stride, dtype=torch.float32, device=device)
        shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
        shift_x = shift_x.reshape(-1)
        shift_y = shift_y.reshape(-1)
        return torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)

    def _grid_anchors(self, features: List[torch.Tensor]) -> List[torch.Tensor]:
        anchors = []
        for feat, stride, base_anchors in zip(features, self.strides, self.cell_anchors):
            shifts = self._grid_shifts(feat, stride)
            anchors.append((shifts.view(-1, 1, 4) + base_anchors.view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def generate_cell_anchors(self, sizes=(32, 64, 128, 256, 512), aspect_ratios=(0.5, 1, 2)):
        anchors = []
        for size in sizes:
            area = size ** 2.0
            for aspect_ratio in aspect_ratios:
                w = math.sqrt(area / aspect_ratio)
                h = aspect_ratio * w
                x0, y0, x1, y1 = -w / 2.0, -h / 2.0, w / 2.0, h / 2.0
                anchors.append([x0, y0, x1, y1])
        return torch.tensor(anchors)

    def forward(self, features: List[torch.Tensor]) -> List[torch.Tensor]:
        """
        Args:
            features: list of backbone feature maps on which to generate anchors.

        Returns:
            list[Tensor]: #featuremap tensors, each is (#locations x #cell_anchors) x 4
        """
        return self._grid_anchors(features)


def build_anchor_generator(cfg) -> DefaultAnchorGenerator:
    return DefaultAnchorGenerator(
        sizes=cfg.get("sizes", [[32], [64], [128], [256], [512]]),
        aspect_ratios=cfg.get("aspect_ratios", [[0.5, 1.0, 2.0]]),
        strides=cfg.get("strides", [8, 16, 32, 64, 128]),
        offset=cfg.get("offset", 0.0),
    )


if __name__ == "__main__":
    gen = build_anchor_generator({})
    for it in range(1000):
        # multi-scale training: short side sampled every iteration
        short = 640 + 32 * (it % 6)
        feats = [torch.randn(2, 256, short // s, short // s) for s in gen.strides]
        anchors = gen(feats)
    print([a.shape for a in anchors])
