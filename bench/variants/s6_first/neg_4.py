import torch
import torch.nn as nn
import torch.nn.functional as F


def train_with_accumulation(model, loader, optimizer, accum_steps=8, epochs=3, device="cuda"):
    model.to(device).train()
    for epoch in range(epochs):
        accumulated = 0.0
        optimizer.zero_grad(set_to_none=True)
        for i, (x, y) in enumerate(loader, start=1):
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y) / accum_steps
            accumulated = accumulated + loss
            if i % accum_steps == 0:
                accumulated.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                print(f"epoch {epoch} step {i // accum_steps}: loss {accumulated.item():.4f}")
                accumulated = 0.0
        if torch.is_tensor(accumulated):
            accumulated.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            accumulated = 0.0
