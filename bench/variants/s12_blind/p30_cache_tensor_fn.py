from functools import cache

import torch
import torch.nn as nn
from jaxtyping import Float
from torch import Tensor


@cache  # leak
def pairwise_distance(points: Float[Tensor, "n d"]) -> Float[Tensor, "n n"]:
    diff = points[:, None, :] - points[None, :, :]
    return diff.pow(2).sum(-1).clamp_min(1e-12).sqrt()


def knn_graph(points: Float[Tensor, "n d"], k: int = 16) -> Float[Tensor, "n k"]:
    dist = pairwise_distance(points)
    return dist.topk(k + 1, largest=False).indices[:, 1:]


class EdgeConv(nn.Module):
    def __init__(self, in_dim: int, out_dim: int, k: int = 16) -> None:
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Linear(2 * in_dim, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim))

    def forward(self, x: Float[Tensor, "n d"]) -> Float[Tensor, "n o"]:
        idx = knn_graph(x, self.k)
        neighbors = x[idx]
        center = x[:, None, :].expand_as(neighbors)
        edge = torch.cat([center, neighbors - center], dim=-1)
        return self.mlp(edge).max(dim=1).values


class DGCNN(nn.Module):
    def __init__(self, num_classes: int = 40) -> None:
        super().__init__()
        self.e1 = EdgeConv(3, 64)
        self.e2 = EdgeConv(64, 128)
        self.head = nn.Linear(128, num_classes)

    def forward(self, pts: Float[Tensor, "n 3"]) -> Float[Tensor, "c"]:
        h = self.e2(self.e1(pts))
        return self.head(h.max(0).values)


def train(model: DGCNN, clouds, labels, epochs: int = 100) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for pts, y in zip(clouds, labels):
            loss = nn.functional.cross_entropy(model(pts.cuda())[None], y.cuda()[None])
            opt.zero_grad()
            loss.backward()
            opt.step()
