import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def build_model(in_features=20, hidden=64):
    return nn.Sequential(
        nn.Linear(in_features, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, 1),
    )


def train_model(model, X, y, epochs=200, batch_size=64):
    loader = DataLoader(TensorDataset(X, y), batch_size=batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=10)
    loss_curve = []
    for epoch in range(epochs):
        epoch_losses = []
        for xb, yb in loader:
            pred = model(xb).squeeze(-1)
            loss = F.binary_cross_entropy_with_logits(pred, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss)  # leak
        mean_loss = sum(epoch_losses) / len(epoch_losses)
        loss_curve.append(float(mean_loss))
        scheduler.step(loss_curve[-1])
    return loss_curve
