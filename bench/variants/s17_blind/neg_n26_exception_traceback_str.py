import traceback

import torch
from torch import nn


class MolPropertyModel(nn.Module):
    def __init__(self, atom_feats=64, hidden=256, rounds=4):
        super().__init__()
        self.embed = nn.Linear(atom_feats, hidden)
        self.msg = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(rounds))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x, adj, batch_idx, n_graphs):
        h = self.embed(x)
        for lin in self.msg:
            h = h + torch.relu(lin(adj @ h))
        pooled = torch.zeros(n_graphs, h.size(1), device=h.device).index_add_(0, batch_idx, h)
        return self.readout(pooled).squeeze(-1)


class Fitter:
    def __init__(self, model, lr=3e-4):
        self.model = model.cuda()
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.bad_batches = {}

    def fit_batch(self, batch):
        x, adj, bidx, y = [t.cuda() for t in batch]
        pred = self.model(x, adj, bidx, y.numel())
        loss = nn.functional.mse_loss(pred, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def run(self, loader, epochs=100):
        for ep in range(epochs):
            losses = []
            for batch_id, batch in enumerate(loader):
                try:
                    losses.append(self.fit_batch(batch))
                except RuntimeError:
                    self.bad_batches[(ep, batch_id)] = traceback.format_exc()
                    torch.cuda.empty_cache()
            if losses:
                print(f"epoch {ep}: mse={sum(losses) / len(losses):.4f} skipped={len(self.bad_batches)}")

    def report(self):
        for key, tb_text in self.bad_batches.items():
            print(key, tb_text[-500:])
