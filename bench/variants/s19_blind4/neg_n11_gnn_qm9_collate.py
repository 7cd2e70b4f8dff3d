"""Plain-PyTorch message passing network for QM9 HOMO-LUMO gap.

No PyG dependency (the cluster image does not have it); graphs are batched by
hand in ``collate_graphs``.
"""
import argparse
import logging
import pickle
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import yaml
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("qm9")


@dataclass
class GraphBatch:
    atoms: torch.Tensor      # [N] atomic numbers
    pos: torch.Tensor        # [N, 3]
    edge_index: torch.Tensor  # [2, E]
    graph_id: torch.Tensor   # [N]
    y: torch.Tensor          # [B]
    num_graphs: int


class QM9Pickle(Dataset):
    def __init__(self, path, target="gap", cutoff=5.0):
        with open(path, "rb") as f:
            self.mols = pickle.load(f)
        self.target = target
        self.cutoff = cutoff

    def __len__(self):
        return len(self.mols)

    def __getitem__(self, idx):
        m = self.mols[idx]
        pos = np.asarray(m["pos"], dtype=np.float32)
        d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
        src, dst = np.nonzero((d < self.cutoff) & (d > 0))
        return {"z": np.asarray(m["z"]), "pos": pos, "edges": np.stack([src, dst]), "y": m[self.target]}


def collate_graphs(samples):
    offset, z, pos, edges, gid = 0, [], [], [], []
    for i, s in enumerate(samples):
        n = len(s["z"])
        z.append(s["z"])
        pos.append(s["pos"])
        edges.append(s["edges"] + offset)
        gid.append(np.full(n, i))
        offset += n
    y = torch.as_tensor([s["y"] for s in samples], dtype=torch.float32)
    return GraphBatch(
        atoms=torch.from_numpy(np.concatenate(z)).long(),
        pos=torch.from_numpy(np.concatenate(pos)),
        edge_index=torch.from_numpy(np.concatenate(edges, axis=1)).long(),
        graph_id=torch.from_numpy(np.concatenate(gid)).long(),
        y=y,
        num_graphs=len(samples),
    )


class RBF(nn.Module):
    def __init__(self, n=50, cutoff=5.0):
        super().__init__()
        self.register_buffer("mu", torch.linspace(0, cutoff, n))
        self.gamma = 10.0 / cutoff

    def forward(self, d):
        return torch.exp(-self.gamma * (d[:, None] - self.mu) ** 2)


class InteractionBlock(nn.Module):
    def __init__(self, hidden, n_rbf):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(n_rbf, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.update = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, h, edge_index, rbf):
        src, dst = edge_index
        msg = h[src] * self.filter(rbf)
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        return h + self.update(agg)


class MPNN(nn.Module):
    def __init__(self, hidden=128, n_blocks=4, n_rbf=50, cutoff=5.0):
        super().__init__()
        self.embed = nn.Embedding(10, hidden)
        self.rbf = RBF(n_rbf, cutoff)
        self.blocks = nn.ModuleList([InteractionBlock(hidden, n_rbf) for _ in range(n_blocks)])
        self.out = nn.Sequential(nn.Linear(hidden, hidden // 2), nn.SiLU(), nn.Linear(hidden // 2, 1))

    def forward(self, b: GraphBatch):
        h = self.embed(b.atoms)
        d = (b.pos[b.edge_index[0]] - b.pos[b.edge_index[1]]).norm(dim=-1)
        rbf = self.rbf(d)
        for blk in self.blocks:
            h = blk(h, b.edge_index, rbf)
        per_atom = self.out(h).squeeze(-1)
        return torch.zeros(b.num_graphs, device=h.device).index_add_(0, b.graph_id, per_atom)


def to_device(b, device):
    return GraphBatch(b.atoms.to(device), b.pos.to(device), b.edge_index.to(device),
                      b.graph_id.to(device), b.y.to(device), b.num_graphs)


def run_epoch(model, loader, device, opt=None):
    training = opt is not None
    model.train(training)
    abs_err, n = 0.0, 0
    with torch.set_grad_enabled(training):
        for batch in loader:
            batch = to_device(batch, device)  # workers hand back CPU tensors
            pred = model(batch)
            loss = nn.functional.l1_loss(pred, batch.y)
            if training:
                opt.zero_grad()
                loss.backward()
                opt.step()
            abs_err += loss.item() * batch.num_graphs
            n += batch.num_graphs
    return abs_err / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/qm9_gap.yaml")
    cfg = yaml.safe_load(open(ap.parse_args().config))
    device = torch.device("cuda")

    train_ds = QM9Pickle(cfg["train_pkl"], cfg.get("target", "gap"))
    val_ds = QM9Pickle(cfg["val_pkl"], cfg.get("target", "gap"))
    loader_kw = dict(batch_size=cfg["batch_size"], collate_fn=collate_graphs,
                     num_workers=cfg.get("num_workers", 4), persistent_workers=True, pin_memory=True)
    train_dl = DataLoader(train_ds, shuffle=True, **loader_kw)
    val_dl = DataLoader(val_ds, **loader_kw)

    model = MPNN(cfg["hidden"], cfg["n_blocks"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.8, patience=5)
    history = {"train_mae": [], "val_mae": []}
    for epoch in range(cfg["epochs"]):
        tr = run_epoch(model, train_dl, device, opt)
        va = run_epoch(model, val_dl, device)
        sched.step(va)
        history["train_mae"].append(tr)
        history["val_mae"].append(va)
        log.info("epoch %3d  train MAE %.4f eV  val MAE %.4f eV", epoch, tr, va)
    np.save("qm9_history.npy", history, allow_pickle=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
