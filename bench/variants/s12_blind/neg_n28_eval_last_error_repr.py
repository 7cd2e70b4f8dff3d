from typing import Optional

import torch
import torch.nn as nn


class Evaluator:
    def __init__(self, model: nn.Module, device: str = "cuda") -> None:
        self.model = model.to(device)
        self.device = device
        self.last_error: Optional[str] = None
        self.n_errors = 0

    @torch.inference_mode()
    def score_batch(self, batch: dict) -> list[float]:
        logits = self.model(batch["image"].to(self.device))
        return logits.softmax(-1).max(-1).values.tolist()

    def run(self, loader) -> dict[str, float]:
        self.model.eval()
        scores: list[float] = []
        for i, batch in enumerate(loader):
            try:
                scores.extend(self.score_batch(batch))
            except (RuntimeError, ValueError) as err:
                self.n_errors += 1
                self.last_error = repr(err)
                print(f"batch {i} failed: {err}")
        return {"mean_conf": sum(scores) / max(len(scores), 1), "errors": float(self.n_errors)}

    def report(self) -> str:
        return self.last_error or "no errors"


def run_with_retry(evaluator: Evaluator, loader, retries: int = 2) -> dict[str, float]:
    error = None
    for attempt in range(retries + 1):
        try:
            return evaluator.run(loader)
        except torch.cuda.OutOfMemoryError as e:
            error = e
            torch.cuda.empty_cache()
            print(f"attempt {attempt} OOM")
    raise RuntimeError("evaluation failed after retries") from error


def periodic_eval(evaluator: Evaluator, loaders: dict, every_n_steps: int, step: int) -> None:
    if step % every_n_steps:
        return
    for split, loader in loaders.items():
        print(split, run_with_retry(evaluator, loader))
    print(evaluator.report())
