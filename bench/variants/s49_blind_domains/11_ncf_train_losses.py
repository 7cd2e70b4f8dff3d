import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class NeuMF(nn.Module):
    """Neural matrix factorisation: GMF and MLP towers fused by a linear layer."""

    def __init__(self, n_users, n_items, factors=32, mlp_layers=(64, 32, 16)):
        super().__init__()
        self.user_gmf = nn.Embedding(n_users, factors)
        self.item_gmf = nn.Embedding(n_items, factors)
        self.user_mlp = nn.Embedding(n_users, mlp_layers[0] // 2)
        self.item_mlp = nn.Embedding(n_items, mlp_layers[0] // 2)
        layers = []
        for d_in, d_out in zip(mlp_layers[:-1], mlp_layers[1:]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.predict = nn.Linear(factors + mlp_layers[-1], 1)

    def forward(self, users, items):
        gmf = self.user_gmf(users) * self.item_gmf(items)
        mlp = self.mlp(torch.cat([self.user_mlp(users), self.item_mlp(items)], dim=-1))
        return self.predict(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


def train_epoch(model, loader: DataLoader, optimizer, device):
    model.train()
    losses = []
    for users, items, labels in loader:
        users, items, labels = users.to(device), items.to(device), labels.to(device)
        logits = model(users, items)
        loss = F.binary_cross_entropy_with_logits(logits, labels.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)  # leak
    return torch.stack(losses).mean().item()


def hit_ratio(model, users, items, k=10):
    with torch.no_grad():
        scores = model(users, items).view(-1, 100)
    topk = scores.topk(k, dim=1).indices
    return (topk == 0).any(dim=1).float().mean().item()


def main(train_set, n_users, n_items, epochs=20):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = NeuMF(n_users, n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        print(f"epoch {epoch}: bce={train_epoch(model, loader, optimizer, device):.4f}")
