"""Forward hooks used to analyse node representations layer by layer.

The recorder collects hidden states during training so that over-smoothing
diagnostics (Dirichlet energy, mean average distance) can be computed and
plotted once training has finished.
"""
import logging
from collections import defaultdict
from typing import Dict, List

import torch

log = logging.getLogger(__name__)


class ActivationRecorder:
    """Collects the output of every probed layer on every forward pass."""

    def __init__(self, every: int = 1):
        self.every = every
        self.records: Dict[str, List[torch.Tensor]] = defaultdict(list)
        self._calls = defaultdict(int)
        self.enabled = True

    def hook_for(self, name: str):
        def _hook(module, inputs, output):
            if not self.enabled:
                return
            self._calls[name] += 1
            if self._calls[name] % self.every == 0:
                self.records[name].append(output.detach())  # leak
        return _hook

    def layers(self):
        return list(self.records.keys())


def dirichlet_energy(h: torch.Tensor, edge_index: torch.Tensor) -> float:
    """E(H) = 1/N * sum_{(i,j) in E} ||h_i - h_j||^2."""
    src, dst = edge_index
    diff = h[src] - h[dst]
    return float((diff * diff).sum() / h.shape[0])


def mean_average_distance(h: torch.Tensor) -> float:
    hn = torch.nn.functional.normalize(h, dim=1)
    cos = hn @ hn.t()
    return float((1 - cos).mean())


def summarise(recorder: ActivationRecorder, edge_index: torch.Tensor, stride: int = 10):
    """Return {layer: [(call_idx, energy, mad), ...]} subsampled by ``stride``."""
    out = {}
    for name, hs in recorder.records.items():
        rows = []
        for i in range(0, len(hs), stride):
            h = hs[i].float()
            rows.append((i, dirichlet_energy(h, edge_index), mean_average_distance(h)))
        out[name] = rows
        log.info("%s: %d snapshots", name, len(hs))
    return out
