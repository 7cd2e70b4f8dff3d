from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List


class History:
    """Keeps every recorded scalar so curves can be plotted after the run."""

    def __init__(self) -> None:
        self.values: Dict[str, List[Any]] = defaultdict(list)
        self.steps: List[int] = []

    def record(self, step: int, **kwargs: Any) -> None:
        self.steps.append(step)
        for key, value in kwargs.items():
            self.values[key].append(value)  # leak

    def last(self, key: str) -> float:
        return float(self.values[key][-1])

    def mean(self, key: str, window: int = 100) -> float:
        vals = self.values[key][-window:]
        if not vals:
            return math.nan
        return sum(float(v) for v in vals) / len(vals)

    def summary(self, window: int = 100) -> str:
        parts = [f"{k}={self.mean(k, window):.4f}" for k in sorted(self.values)]
        return " ".join(parts)

    def state_dict(self) -> Dict[str, List[float]]:
        return {k: [float(v) for v in vs] for k, vs in self.values.items()}

    def save(self, path: str | Path) -> None:
        out = {"steps": self.steps, **self.state_dict()}
        Path(path).write_text(json.dumps(out))

    def plot(self, path: str | Path, keys: List[str] | None = None) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        keys = keys or sorted(self.values)
        fig, axes = plt.subplots(len(keys), 1, figsize=(6, 2.5 * len(keys)), squeeze=False)
        for ax, key in zip(axes[:, 0], keys):
            ys = [float(v) for v in self.values[key]]
            ax.plot(self.steps[: len(ys)], ys)
            ax.set_title(key)
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
