"""BYOL self-supervised learner.

The target network is an exponential moving average of the online network;
it is refreshed at the start of every training forward so that callers only
have to do ``loss = learner(x1, x2); loss.backward(); opt.step()``.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import models


def mlp(dim, projection_size, hidden_size=4096):
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size),
    )


def regression_loss(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


class NetWrapper(nn.Module):
    def __init__(self, net, feat_dim, projection_size, projection_hidden_size):
        super().__init__()
        self.net = net
        self.projector = mlp(feat_dim, projection_size, projection_hidden_size)

    def forward(self, x):
        return self.projector(self.net(x))


class CosineTau:
    def __init__(self, base_tau=0.996, total_steps=100_000):
        self.base_tau = base_tau
        self.total_steps = total_steps

    def __call__(self, step):
        return 1 - (1 - self.base_tau) * (math.cos(math.pi * step / self.total_steps) + 1) / 2


class BYOL(nn.Module):
    def __init__(self, backbone: nn.Module, feat_dim=2048, projection_size=256,
                 projection_hidden_size=4096, base_tau=0.996, total_steps=100_000):
        super().__init__()
        self.online_encoder = NetWrapper(backbone, feat_dim, projection_size, projection_hidden_size)
        self.online_predictor = mlp(projection_size, projection_size, projection_hidden_size)
        self.target_encoder = copy.deepcopy(self.online_encoder)
        for p in self.target_encoder.parameters():
            p.requires_grad_(False)
        self.tau_schedule = CosineTau(base_tau, total_steps)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def _update_target(self):
        tau = self.tau_schedule(int(self.step))
        for online_p, target_p in zip(self.online_encoder.parameters(),
                                      self.target_encoder.parameters()):
            target_p.mul_(tau).add_(online_p, alpha=1 - tau)  # leak
        self.step += 1

    def forward(self, x1, x2):
        if self.training:
            self._update_target()

        online_pred_1 = self.online_predictor(self.online_encoder(x1))
        online_pred_2 = self.online_predictor(self.online_encoder(x2))
        with torch.no_grad():
            target_proj_1 = self.target_encoder(x1)
            target_proj_2 = self.target_encoder(x2)

        loss = regression_loss(online_pred_1, target_proj_2) + regression_loss(online_pred_2, target_proj_1)
        return loss.mean()


def build_learner(total_steps):
    resnet = models.resnet50(weights=None)
    resnet.fc = nn.Identity()
    return BYOL(resnet, feat_dim=2048, total_steps=total_steps)


def train(learner, loader, epochs, lr=0.2, device="cuda"):
    learner.to(device).train()
    params = [p for n, p in learner.named_parameters() if not n.startswith("target_encoder")]
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=1.5e-6)
    for epoch in range(epochs):
        running = 0.0
        for i, ((v1, v2), _) in enumerate(loader):
            loss = learner(v1.to(device, non_blocking=True), v2.to(device, non_blocking=True))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item()
            if i % 100 == 0:
                print(f"epoch {epoch} it {i} loss {running / (i + 1):.4f} step {int(learner.step)}")
        torch.save(learner.online_encoder.net.state_dict(), f"byol_r50_ep{epoch}.pt")
