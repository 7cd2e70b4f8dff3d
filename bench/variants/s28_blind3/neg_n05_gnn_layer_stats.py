"""Node classification on OGB graphs with per-layer activation statistics.

Used to diagnose over-smoothing: we log the mean pairwise distance of node
embeddings after every message-passing layer.
"""
import logging
from typing import Dict, List

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GCNConv, MessagePassing, SAGEConv

log = logging.getLogger(__name__)


class DeepGNN(nn.Module):
    def __init__(self, in_dim, hidden, out_dim, num_layers=8, conv="sage", dropout=0.2):
        super().__init__()
        Conv = SAGEConv if conv == "sage" else GCNConv
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.convs = nn.ModuleList(Conv(dims[i], dims[i + 1]) for i in range(num_layers))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(num_layers - 1))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for conv, norm in zip(self.convs[:-1], self.norms):
            x = F.dropout(F.relu(norm(conv(x, edge_index))), self.dropout, self.training)
        return self.convs[-1](x, edge_index)


class SmoothnessProbe:
    """Collects a cheap over-smoothing statistic from every conv layer."""

    def __init__(self, sample_nodes: int = 512):
        self.sample_nodes = sample_nodes
        self.stats: Dict[str, torch.Tensor] = {}
        self._handles: List = []

    def _hook(self, name):
        def fn(module, inputs, output):
            h = output.detach()[: self.sample_nodes]
            h = F.normalize(h, dim=-1)
            self.stats[name] = 1.0 - (h @ h.t()).mean()
        return fn

    def attach(self, model: nn.Module):
        for name, module in model.named_modules():
            if isinstance(module, MessagePassing):
                self._handles.append(module.register_forward_hook(self._hook(name)))

    def detach(self):
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def summary(self):
        return {k: float(v) for k, v in self.stats.items()}


class Trainer:
    def __init__(self, model, data, train_idx, cfg):
        self.model = model.cuda()
        self.cfg = cfg
        self.loader = NeighborLoader(data, num_neighbors=cfg["fanout"], batch_size=cfg["batch_size"],
                                     input_nodes=train_idx, shuffle=True, num_workers=6)
        self.opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"], weight_decay=cfg["wd"])
        self.probe = SmoothnessProbe() if cfg.get("probe", True) else None
        self.step = 0

    def train_step(self, batch):
        batch = batch.cuda(non_blocking=True)
        if self.probe is not None:
            self.probe.attach(self.model)
        self.opt.zero_grad(set_to_none=True)
        try:
            out = self.model(batch.x, batch.edge_index)[: batch.batch_size]
        finally:
            if self.probe is not None:
                self.probe.detach()
        loss = F.cross_entropy(out, batch.y[: batch.batch_size].view(-1))
        loss.backward()
        self.opt.step()
        self.step += 1
        return loss.item()

    def train_epoch(self, epoch):
        self.model.train()
        total, n = 0.0, 0
        for batch in self.loader:
            total += self.train_step(batch) * batch.batch_size
            n += batch.batch_size
            if self.probe is not None and self.step % self.cfg["log_every"] == 0:
                log.info("step %d smoothness %s", self.step, self.probe.summary())
        log.info("epoch %d loss %.4f", epoch, total / n)
        return total / n

    @torch.no_grad()
    def evaluate(self, data, idx):
        self.model.eval()
        out = self.model(data.x.cuda(), data.edge_index.cuda())
        pred = out[idx].argmax(-1).cpu()
        return (pred == data.y[idx].view(-1)).float().mean().item()
