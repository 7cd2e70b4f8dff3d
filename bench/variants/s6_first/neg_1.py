import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, loader, epochs=10, device="cuda"):
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batch_losses = []
    epoch_preds = []
    for epoch in range(epochs):
        batch_losses.clear()
        epoch_preds.clear()
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                batch_losses.append(loss.item())
                epoch_preds.append(logits.argmax(dim=-1).detach().cpu())
        preds = torch.cat(epoch_preds)
        print(
            f"epoch {epoch}: loss={sum(batch_losses) / len(batch_losses):.4f} "
            f"class_hist={torch.bincount(preds).tolist()}"
        )
