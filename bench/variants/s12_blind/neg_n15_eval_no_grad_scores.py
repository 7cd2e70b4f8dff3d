from typing import Iterable

import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score


def evaluate(model: nn.Module, loader: Iterable, device: str = "cuda") -> dict[str, float]:
    """Compute AUROC on the validation set."""
    model.eval()
    all_scores, all_labels = [], []
    with torch.no_grad():
        for batch in loader:
            inputs = batch["pixel_values"].to(device)
            scores = torch.sigmoid(model(inputs)).squeeze(-1)
            all_scores.append(scores)
            all_labels.append(batch["labels"])
    scores = torch.cat(all_scores).cpu().numpy()
    labels = torch.cat(all_labels).numpy()
    return {"auroc": float(roc_auc_score(labels, scores))}


def train(model: nn.Module, train_loader, val_loader, epochs: int = 15) -> None:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-2)
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0], device="cuda"))
    best = 0.0
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            logits = model(batch["pixel_values"].cuda()).squeeze(-1)
            loss = bce(logits, batch["labels"].float().cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        metrics = evaluate(model, val_loader)
        print(f"epoch {epoch}: {metrics}")
        if metrics["auroc"] > best:
            best = metrics["auroc"]
            torch.save(model.state_dict(), "best.pt")
