"""Fit a neural ODE to damped-pendulum trajectories and track held-out error."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchdiffeq import odeint, odeint_adjoint

logger = logging.getLogger("node")


class ODEFunc(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, dim),
        )
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        return self.net(y)


class NeuralODE(nn.Module):
    def __init__(self, func, method="dopri5", rtol=1e-5, atol=1e-6, adjoint=False):
        super().__init__()
        self.func = func
        self.method, self.rtol, self.atol = method, rtol, atol
        self.solver = odeint_adjoint if adjoint else odeint

    def forward(self, y0, t):
        traj = self.solver(self.func, y0, t, rtol=self.rtol, atol=self.atol, method=self.method)
        return traj.permute(1, 0, 2)  # (batch, time, dim)


def load_split(path, split):
    blob = torch.load(path)
    y = blob[split]  # (N, T, dim)
    return TensorDataset(y[:, 0], y), blob["t"]


@torch.no_grad()
def evaluate(model, loader, t_eval, device):
    model.eval()
    sq_err, count = 0.0, 0
    for y0, target in loader:
        y0, target = y0.to(device), target.to(device)
        pred = model(y0, t_eval)
        batch_err = F.mse_loss(pred, target, reduction="sum")
        sq_err += batch_err
        count += target.numel()
    model.train()
    return (sq_err / max(count, 1)).item()


def train(args):
    device = torch.device(args.device)
    train_ds, t = load_split(args.data, "train")
    val_ds, _ = load_split(args.data, "val")
    t = t.to(device)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=args.batch_size)

    func = ODEFunc(train_ds.tensors[0].shape[-1], args.hidden)
    model = NeuralODE(func, method=args.method, adjoint=args.adjoint).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)

    # train on short horizons, evaluate on the full trajectory
    t_train = t[: args.train_horizon]
    best = float("inf")
    for epoch in range(args.epochs):
        tic = time.time()
        func.nfe = 0
        for y0, target in train_loader:
            y0, target = y0.to(device), target[:, : args.train_horizon].to(device)
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(y0, t_train), target)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        sched.step()

        val_mse = evaluate(model, val_loader, t, device)
        logger.info("epoch %d  train %.4e  val %.4e  nfe %d  (%.1fs)",
                    epoch, loss.item(), val_mse, func.nfe, time.time() - tic)
        if val_mse < best:
            best = val_mse
            torch.save(model.state_dict(), args.out)
    return best


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="pendulum.pt")
    p.add_argument("--out", default="node_best.pt")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--method", default="dopri5")
    p.add_argument("--adjoint", action="store_true")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--train-horizon", type=int, default=20)
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--device", default="cuda")
    return p.parse_args()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train(parse_args())
