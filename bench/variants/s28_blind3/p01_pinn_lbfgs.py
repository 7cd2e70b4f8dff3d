"""Physics-informed solver for the 1D viscous Burgers equation.

Adam warm-up followed by L-BFGS refinement (the usual Raissi et al. recipe).
"""
import logging
import math
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger(__name__)


@dataclass
class PINNConfig:
    layers: tuple = (2, 64, 64, 64, 64, 1)
    nu: float = 0.01 / math.pi
    n_collocation: int = 10_000
    n_boundary: int = 256
    adam_iters: int = 2000
    lbfgs_iters: int = 20_000
    lr: float = 1e-3
    w_ic: float = 1.0
    w_bc: float = 1.0
    log_every: int = 200
    device: str = "cuda"


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        mods = []
        for i in range(len(layers) - 2):
            mods += [nn.Linear(layers[i], layers[i + 1]), nn.Tanh()]
        mods.append(nn.Linear(layers[-2], layers[-1]))
        self.net = nn.Sequential(*mods)
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=-1))


def burgers_residual(model, x, t, nu):
    u = model(x, t)
    u_x, u_t = torch.autograd.grad(u.sum(), (x, t), create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
    return u_t + u * u_x - nu * u_xx


class BurgersPINN:
    def __init__(self, cfg: PINNConfig):
        self.cfg = cfg
        self.model = MLP(cfg.layers).to(cfg.device)
        self.history = {"total": [], "pde": [], "ic": [], "bc": []}
        self.n_evals = 0
        self._sample_points()

    def _sample_points(self):
        d, n, nb = self.cfg.device, self.cfg.n_collocation, self.cfg.n_boundary
        self.x_f = (torch.rand(n, 1, device=d) * 2 - 1).requires_grad_(True)
        self.t_f = torch.rand(n, 1, device=d).requires_grad_(True)
        x0 = torch.linspace(-1, 1, nb, device=d).unsqueeze(-1)
        self.ic = (x0, torch.zeros_like(x0), -torch.sin(math.pi * x0))
        tb = torch.rand(nb, 1, device=d)
        self.bc = (torch.cat([-torch.ones_like(tb), torch.ones_like(tb)]), torch.cat([tb, tb]))

    def compute_losses(self):
        r = burgers_residual(self.model, self.x_f, self.t_f, self.cfg.nu)
        x0, t0, u0 = self.ic
        xb, tb = self.bc
        parts = {
            "pde": r.pow(2).mean(),
            "ic": (self.model(x0, t0) - u0).pow(2).mean(),
            "bc": self.model(xb, tb).pow(2).mean(),
        }
        parts["total"] = parts["pde"] + self.cfg.w_ic * parts["ic"] + self.cfg.w_bc * parts["bc"]
        return parts

    def _record(self, parts):
        self.n_evals += 1
        for key, value in parts.items():
            self.history[key].append(value)  # leak
        if self.n_evals % self.cfg.log_every == 0:
            log.info("eval %d  total=%.3e  pde=%.3e", self.n_evals,
                     float(parts["total"]), float(parts["pde"]))

    def train_adam(self):
        opt = torch.optim.Adam(self.model.parameters(), lr=self.cfg.lr)
        for _ in range(self.cfg.adam_iters):
            opt.zero_grad(set_to_none=True)
            parts = self.compute_losses()
            parts["total"].backward()
            opt.step()
            self._record(parts)

    def train_lbfgs(self):
        opt = torch.optim.LBFGS(
            self.model.parameters(),
            lr=1.0,
            max_iter=self.cfg.lbfgs_iters,
            max_eval=int(self.cfg.lbfgs_iters * 1.25),
            history_size=50,
            tolerance_grad=1e-7,
            tolerance_change=1.0 * torch.finfo(torch.float32).eps,
            line_search_fn="strong_wolfe",
        )

        def closure():
            opt.zero_grad(set_to_none=True)
            parts = self.compute_losses()
            parts["total"].backward()
            self._record(parts)
            return parts["total"]

        opt.step(closure)
        log.info("L-BFGS finished after %d closure evaluations", self.n_evals)

    def fit(self):
        self.model.train()
        self.train_adam()
        self.train_lbfgs()
        return self.history


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    solver = BurgersPINN(PINNConfig())
    solver.fit()
    torch.save(solver.model.state_dict(), "burgers_pinn.pt")
