"""Physics-informed network for the 1D viscous Burgers equation

    u_t + u u_x - (0.01/pi) u_xx = 0,  x in [-1, 1], t in [0, 1]
    u(0, x) = -sin(pi x),  u(t, -1) = u(t, 1) = 0

Adam warm-up followed by L-BFGS, as in Raissi et al. (2019).  The residual
field on the collocation points is tracked so we can make the
"where does the PDE residual concentrate" figure for the thesis.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, layers=(2, 20, 20, 20, 20, 20, 20, 20, 20, 1)):
        super().__init__()
        mods = []
        for a, b in zip(layers[:-2], layers[1:-1]):
            mods += [nn.Linear(a, b), nn.Tanh()]
        mods.append(nn.Linear(layers[-2], layers[-1]))
        self.net = nn.Sequential(*mods)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, t, x):
        return self.net(torch.cat([t, x], dim=1))


class ResidualMonitor:
    """Keeps the collocation residual over the course of training."""

    def __init__(self, every=1):
        self.every = every
        self.calls = 0
        self.fields = []
        self.mse = []

    def update(self, residual):
        self.calls += 1
        if self.calls % self.every == 0:
            self.fields.append(residual.detach().clone())  # leak
            self.mse.append(residual.pow(2).mean().item())

    def to_numpy(self):
        return np.stack([f.cpu().numpy().ravel() for f in self.fields]), np.array(self.mse)


def grad(out, inp):
    return torch.autograd.grad(out, inp, grad_outputs=torch.ones_like(out), create_graph=True)[0]


def pde_residual(model, t, x, nu):
    u = model(t, x)
    u_t = grad(u, t)
    u_x = grad(u, x)
    u_xx = grad(u_x, x)
    return u_t + u * u_x - nu * u_xx


def sample_points(n_f, n_b, device):
    t_f = torch.rand(n_f, 1, device=device)
    x_f = 2 * torch.rand(n_f, 1, device=device) - 1
    x0 = 2 * torch.rand(n_b, 1, device=device) - 1
    t0 = torch.zeros_like(x0)
    u0 = -torch.sin(math.pi * x0)
    tb = torch.rand(n_b, 1, device=device)
    xb = torch.where(torch.rand(n_b, 1, device=device) < 0.5, -1.0, 1.0)
    return (t_f.requires_grad_(), x_f.requires_grad_()), (t0, x0, u0), (tb, xb)


def total_loss(model, colloc, initial, boundary, nu, **kw):
    res = pde_residual(model, *colloc, nu)
    monitor = kw.get("monitor")
    if monitor is not None:
        monitor.update(res)
    t0, x0, u0 = initial
    tb, xb = boundary
    loss_f = res.pow(2).mean()
    loss_0 = (model(t0, x0) - u0).pow(2).mean()
    loss_b = model(tb, xb).pow(2).mean()
    return loss_f + loss_0 + loss_b, (loss_f.item(), loss_0.item(), loss_b.item())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-f", type=int, default=10000)
    ap.add_argument("--n-b", type=int, default=200)
    ap.add_argument("--adam-iters", type=int, default=20000)
    ap.add_argument("--lbfgs-iters", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    nu = 0.01 / math.pi
    model = MLP().to(device)
    colloc, initial, boundary = sample_points(args.n_f, args.n_b, device)
    monitor = ResidualMonitor(every=1)
    log = {"iter": [], "loss_f": [], "loss_0": [], "loss_b": []}

    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    t0 = time.time()
    for it in range(args.adam_iters):
        opt.zero_grad()
        loss, parts = total_loss(model, colloc, initial, boundary, nu, monitor=monitor)
        loss.backward()
        opt.step()
        if it % 500 == 0:
            for k, v in zip(("loss_f", "loss_0", "loss_b"), parts):
                log[k].append(v)
            log["iter"].append(it)
            print(f"adam {it:6d}  f={parts[0]:.2e} ic={parts[1]:.2e} bc={parts[2]:.2e}  {time.time() - t0:.0f}s")

    lbfgs = torch.optim.LBFGS(model.parameters(), max_iter=args.lbfgs_iters, tolerance_grad=1e-9,
                              tolerance_change=1e-12, history_size=50, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss, _ = total_loss(model, colloc, initial, boundary, nu, monitor=monitor)
        loss.backward()
        return loss

    lbfgs.step(closure)
    fields, mse = monitor.to_numpy()
    np.save("residual_fields.npy", fields)
    np.save("residual_mse.npy", mse)
    np.savez("loss_log.npz", **{k: np.array(v) for k, v in log.items()})
    torch.save(model.state_dict(), "burgers_pinn.pt")


if __name__ == "__main__":
    main()
