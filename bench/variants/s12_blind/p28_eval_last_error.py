import traceback
from typing import Optional

import torch
import torch.nn as nn


class Evaluator:
    def __init__(self, model: nn.Module, device: str = "cuda") -> None:
        self.model = model.to(device)
        self.device = device
        self.last_error: Optional[Exception] = None
        self.n_errors = 0

    @torch.inference_mode()
    def score_batch(self, batch: dict) -> list[float]:
        images = batch["image"].to(self.device)
        logits = self.model(images)
        return logits.softmax(-1).max(-1).values.tolist()

    def run(self, loader) -> dict[str, float]:
        self.model.eval()
        scores: list[float] = []
        for i, batch in enumerate(loader):
            try:
                scores.extend(self.score_batch(batch))
            except (RuntimeError, ValueError) as err:
                self.n_errors += 1
                self.last_error = err  # leak
                print(f"batch {i} failed: {err}")
        return {
            "mean_conf": sum(scores) / max(len(scores), 1),
            "errors": float(self.n_errors),
        }

    def report(self) -> str:
        if self.last_error is None:
            return "no errors"
        return "".join(traceback.format_exception(self.last_error))


def periodic_eval(evaluator: Evaluator, loaders: dict, every_n_steps: int, step: int) -> None:
    if step % every_n_steps:
        return
    for split, loader in loaders.items():
        print(split, evaluator.run(loader))
    print(evaluator.report())
