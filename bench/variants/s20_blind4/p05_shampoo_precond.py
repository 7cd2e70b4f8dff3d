"""A compact Shampoo-style optimizer for 2-D weights (1-D params fall back to AdaGrad).

Preconditioners are recomputed every ``precondition_frequency`` steps from the
running Kronecker factor statistics; in between, the last computed
preconditioner is reused.
"""
from typing import Callable, Iterable, Optional

import torch
from torch.optim import Optimizer


def _matrix_inverse_root(mat: torch.Tensor, root: int, eps: float) -> torch.Tensor:
    """(mat + eps I)^(-1/root) via symmetric eigendecomposition (float64 for stability)."""
    mat64 = mat.double()
    eye = torch.eye(mat64.size(0), dtype=mat64.dtype, device=mat64.device)
    evals, evecs = torch.linalg.eigh(mat64 + eps * eye)
    evals = evals.clamp_min(eps)
    inv_root = evecs @ torch.diag(evals.pow(-1.0 / root)) @ evecs.T
    return inv_root.to(mat.dtype)


class Shampoo(Optimizer):
    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        precondition_frequency: int = 20,
        start_preconditioning_step: int = 50,
    ):
        defaults = dict(
            lr=lr, momentum=momentum, beta2=beta2, eps=eps, weight_decay=weight_decay,
            precondition_frequency=precondition_frequency,
            start_preconditioning_step=start_preconditioning_step,
        )
        super().__init__(params, defaults)

    def _init_state(self, p, state):
        state["step"] = 0
        state["momentum_buffer"] = torch.zeros_like(p)
        if p.dim() == 2:
            state["L"] = torch.zeros(p.size(0), p.size(0), device=p.device, dtype=p.dtype)
            state["R"] = torch.zeros(p.size(1), p.size(1), device=p.device, dtype=p.dtype)
            state["precond_fns"] = []
        else:
            state["sum_sq"] = torch.zeros_like(p)

    @torch.no_grad()
    def step(self, closure: Optional[Callable] = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            lr, eps, beta2 = group["lr"], group["eps"], group["beta2"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if group["weight_decay"]:
                    g = g.add(p, alpha=group["weight_decay"])
                state = self.state[p]
                if not state:
                    self._init_state(p, state)
                state["step"] += 1

                if p.dim() == 2:
                    state["L"].mul_(beta2).add_(g @ g.T, alpha=1 - beta2)
                    state["R"].mul_(beta2).add_(g.T @ g, alpha=1 - beta2)
                    step = state["step"]
                    if step >= group["start_preconditioning_step"] and step % group["precondition_frequency"] == 0:
                        L_inv = _matrix_inverse_root(state["L"], 4, eps)
                        R_inv = _matrix_inverse_root(state["R"], 4, eps)
                        state["precond_fns"].append(lambda x, L=L_inv, R=R_inv: L @ x @ R)  # leak
                    if state["precond_fns"]:
                        update = state["precond_fns"][-1](g)
                        # graft the preconditioned direction onto the gradient norm
                        update = update * (g.norm() / update.norm().clamp_min(eps))
                    else:
                        update = g
                else:
                    state["sum_sq"].addcmul_(g, g)
                    update = g / (state["sum_sq"].sqrt() + eps)

                buf = state["momentum_buffer"]
                buf.mul_(group["momentum"]).add_(update)
                p.add_(buf, alpha=-lr)

        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10))
    opt = Shampoo(net.parameters(), lr=0.05, precondition_frequency=10, start_preconditioning_step=10)
    xs, ys = torch.randn(512, 64), torch.randint(0, 10, (512,))
    for it in range(5000):
        idx = torch.randint(0, 512, (64,))
        loss = torch.nn.functional.cross_entropy(net(xs[idx]), ys[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 500 == 0:
            print(it, round(loss.item(), 4))
