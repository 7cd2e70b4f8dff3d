"""Solubility (logS) regression with a message-passing network, trained with ignite.

A handful of ESOL/AqSolDB molecules produce degenerate graphs after RDKit
sanitisation (single atoms, disconnected salts) and the scatter ops blow up on
them.  Rather than crash a multi-hour run we skip those batches and report
them at the end.
"""
import argparse
import logging

import torch
import torch.nn as nn
from ignite.engine import Engine, Events
from ignite.handlers import EarlyStopping, ModelCheckpoint
from ignite.metrics import MeanAbsoluteError, MeanSquaredError
from torch_geometric.loader import DataLoader
from torch_geometric.nn import NNConv, Set2Set

from chem.featurize import MoleculeCSVDataset

logger = logging.getLogger("molprop")


class MPNN(nn.Module):
    def __init__(self, node_dim, edge_dim, hidden=64, steps=3):
        super().__init__()
        self.lin0 = nn.Linear(node_dim, hidden)
        edge_net = nn.Sequential(nn.Linear(edge_dim, 128), nn.ReLU(), nn.Linear(128, hidden * hidden))
        self.conv = NNConv(hidden, hidden, edge_net, aggr="mean")
        self.gru = nn.GRU(hidden, hidden)
        self.readout = Set2Set(hidden, processing_steps=3)
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.steps = steps

    def forward(self, data):
        out = torch.relu(self.lin0(data.x))
        h = out.unsqueeze(0)
        for _ in range(self.steps):
            m = torch.relu(self.conv(out, data.edge_index, data.edge_attr))
            out, h = self.gru(m.unsqueeze(0), h)
            out = out.squeeze(0)
        return self.head(self.readout(out, data.batch)).squeeze(-1)


def create_trainer(model, optimizer, device, target_std):
    loss_fn = nn.MSELoss()

    def _update(engine, batch):
        model.train()
        batch = batch.to(device)
        optimizer.zero_grad()
        try:
            pred = model(batch)
            loss = loss_fn(pred, batch.y / target_std)
            loss.backward()
        except (RuntimeError, IndexError) as err:
            engine.state.failed_batches.append((engine.state.iteration, f"{type(err).__name__}: {err}"))
            return float("nan")
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimizer.step()
        return loss.item()

    trainer = Engine(_update)

    @trainer.on(Events.STARTED)
    def _init_state(engine):
        engine.state.failed_batches = []

    return trainer


def create_evaluator(model, device, target_std):
    def _infer(engine, batch):
        model.eval()
        with torch.no_grad():
            batch = batch.to(device)
            return model(batch) * target_std, batch.y

    evaluator = Engine(_infer)
    MeanAbsoluteError().attach(evaluator, "mae")
    MeanSquaredError().attach(evaluator, "mse")
    return evaluator


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="data/aqsoldb.csv")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    ds = MoleculeCSVDataset(args.csv, smiles_col="SMILES", target_col="Solubility")
    n_val = len(ds) // 10
    train_ds, val_ds = torch.utils.data.random_split(ds, [len(ds) - n_val, n_val],
                                                     generator=torch.Generator().manual_seed(0))
    target_std = float(torch.stack([d.y for d in train_ds]).std())

    train_loader = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=4)
    val_loader = DataLoader(val_ds, batch_size=256, num_workers=4)

    model = MPNN(ds.num_node_features, ds.num_edge_features).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    trainer = create_trainer(model, optimizer, device, target_std)
    evaluator = create_evaluator(model, device, target_std)
    history = {"val_mae": [], "val_rmse": []}

    @trainer.on(Events.EPOCH_COMPLETED)
    def run_validation(engine):
        evaluator.run(val_loader)
        m = evaluator.state.metrics
        history["val_mae"].append(m["mae"])
        history["val_rmse"].append(m["mse"] ** 0.5)
        logger.info("epoch %d  val MAE %.3f  RMSE %.3f  (skipped so far: %d)",
                    engine.state.epoch, m["mae"], m["mse"] ** 0.5, len(engine.state.failed_batches))

    score_fn = lambda eng: -eng.state.metrics["mae"]
    evaluator.add_event_handler(Events.COMPLETED, EarlyStopping(patience=30, score_function=score_fn, trainer=trainer))
    evaluator.add_event_handler(Events.COMPLETED,
                                ModelCheckpoint("checkpoints", "mpnn", n_saved=2, score_function=score_fn,
                                                require_empty=False), {"model": model})

    trainer.run(train_loader, max_epochs=args.epochs)
    for it, err in trainer.state.failed_batches:
        logger.warning("iteration %d skipped: %s", it, err)
    torch.save(history, "history.pt")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
