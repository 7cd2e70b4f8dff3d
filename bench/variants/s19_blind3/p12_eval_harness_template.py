"""Evaluation harness for multi-label tagging checkpoints.

``Evaluator.evaluate`` is the shared template (iterate, predict, score);
task-specific evaluators implement ``predict_step`` and ``compute_metrics``.
"""
import argparse
import json
import logging
from typing import Dict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger("evalharness")


class Evaluator:
    name = "base"

    def __init__(self, model: nn.Module, loader: DataLoader, device: str = "cpu"):
        self.model = model
        self.loader = loader
        self.device = device

    def predict_step(self, batch):
        raise NotImplementedError

    def compute_metrics(self, results: Dict[int, dict]) -> Dict[str, float]:
        raise NotImplementedError

    def evaluate(self) -> Dict[str, float]:
        was_training = self.model.training
        self.model.eval()
        results = {}
        for batch_idx, batch in enumerate(self.loader):
            out = self.predict_step(batch)
            results[batch_idx] = out  # leak
        metrics = self.compute_metrics(results)
        self.model.train(was_training)
        logger.info("[%s] %s", self.name, json.dumps(metrics))
        return metrics


class MultiLabelEvaluator(Evaluator):
    name = "multilabel"

    def __init__(self, model, loader, threshold=0.5, **kw):
        super().__init__(model, loader, **kw)
        self.threshold = threshold
        self.bce = nn.BCEWithLogitsLoss(reduction="sum")

    def predict_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        logits = self.model(x)
        return {"logits": logits, "targets": y, "loss": self.bce(logits, y)}

    def compute_metrics(self, results):
        logits = torch.cat([r["logits"] for r in results.values()])
        targets = torch.cat([r["targets"] for r in results.values()])
        total_loss = sum(float(r["loss"]) for r in results.values())
        preds = (logits.sigmoid() > self.threshold).float()
        tp = (preds * targets).sum(0)
        fp = (preds * (1 - targets)).sum(0)
        fn = ((1 - preds) * targets).sum(0)
        micro_f1 = (2 * tp.sum() / (2 * tp.sum() + fp.sum() + fn.sum()).clamp(min=1)).item()
        per_class = 2 * tp / (2 * tp + fp + fn).clamp(min=1)
        return {
            "loss": total_loss / targets.numel(),
            "micro_f1": micro_f1,
            "macro_f1": per_class.mean().item(),
        }


class Tagger(nn.Module):
    def __init__(self, d_in=512, n_tags=40):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(d_in, 1024), nn.GELU(), nn.Dropout(0.2), nn.Linear(1024, n_tags))

    def forward(self, x):
        return self.mlp(x)


def load_checkpoint(model, path):
    if path is None:
        logger.warning("no checkpoint given, evaluating random init")
        return model
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state.get("model", state))
    return model


def build_eval_loader(n, d_in, n_tags, bs):
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(n, d_in, generator=g)
    y = (torch.rand(n, n_tags, generator=g) < 0.1).float()
    return DataLoader(TensorDataset(x, y), batch_size=bs)


def main():
    ap = argparse.ArgumentParser(description="evaluate tagging checkpoints")
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--out", default="metrics.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    model = load_checkpoint(Tagger(), args.ckpt)
    loader = build_eval_loader(args.n, 512, 40, args.batch_size)
    evaluator = MultiLabelEvaluator(model, loader, threshold=args.threshold)
    metrics = evaluator.evaluate()
    with open(args.out, "w") as f:
        json.dump(metrics, f, indent=2)


if __name__ == "__main__":
    main()
