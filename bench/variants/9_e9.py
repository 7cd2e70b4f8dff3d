import torch
from mylib import build_model


class Evaluator:
    def __init__(self, cfg):
        self.model = build_model(cfg)

    def run(self, loader):
        preds = []
        for x, y in loader:
            logits = self.model(x)
            preds.append(logits)  # leak
        return torch.cat(preds)
