import torch
import torch.nn as nn
import torch.nn.functional as F


class PoissonPINN(nn.Module):
    def __init__(self, hidden=64, depth=4):
        super().__init__()
        layers = [nn.Linear(2, hidden), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.Tanh()]
        layers.append(nn.Linear(hidden, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, xy):
        return self.net(xy)


def pde_residual(model, xy):
    xy = xy.requires_grad_(True)
    u = model(xy)
    grads = torch.autograd.grad(u.sum(), xy, create_graph=True)[0]
    lap = 0.0
    for d in range(2):
        lap = lap + torch.autograd.grad(grads[:, d].sum(), xy, create_graph=True)[0][:, d]
    return lap + 1.0


def fit_lbfgs(model, interior, boundary, boundary_vals, iters=50):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=20, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        res = pde_residual(model, interior.clone())
        loss = res.pow(2).mean() + F.mse_loss(model(boundary).squeeze(-1), boundary_vals)
        loss.backward()
        return loss

    for it in range(iters):
        loss = optimizer.step(closure)
        if it % 10 == 0:
            print(it, loss.item())
