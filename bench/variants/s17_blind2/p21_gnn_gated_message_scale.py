"""Edge-gated message passing network with a running message-scale normaliser (PyG)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.loader import DataLoader
from torch_geometric.nn import MessagePassing, global_add_pool


class GatedEdgeConv(MessagePassing):
    def __init__(self, dim, edge_dim, momentum=0.01):
        super().__init__(aggr="add")
        self.lin = nn.Linear(dim, dim)
        self.gate = nn.Sequential(nn.Linear(2 * dim + edge_dim, dim), nn.SiLU(), nn.Linear(dim, 1))
        self.update_mlp = nn.Sequential(nn.Linear(2 * dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.momentum = momentum
        self.register_buffer("msg_scale", torch.ones(()))

    def forward(self, x, edge_index, edge_attr):
        agg = self.propagate(edge_index, x=x, edge_attr=edge_attr)
        return x + self.update_mlp(torch.cat([x, agg], dim=-1))

    def message(self, x_i, x_j, edge_attr):
        g = torch.sigmoid(self.gate(torch.cat([x_i, x_j, edge_attr], dim=-1)))
        msg = g * self.lin(x_j)
        if self.training:
            batch_scale = msg.norm(dim=-1).mean()
            self.msg_scale = (1 - self.momentum) * self.msg_scale + self.momentum * batch_scale  # leak
            return msg / (batch_scale + 1e-6)
        return msg / (self.msg_scale + 1e-6)


class GatedGNN(nn.Module):
    def __init__(self, node_dim, edge_dim, hidden=128, layers=4, out_dim=1):
        super().__init__()
        self.embed = nn.Linear(node_dim, hidden)
        self.convs = nn.ModuleList(GatedEdgeConv(hidden, edge_dim) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, out_dim))

    def forward(self, data):
        h = self.embed(data.x.float())
        for conv, norm in zip(self.convs, self.norms):
            h = norm(conv(h, data.edge_index, data.edge_attr.float()))
        return self.readout(global_add_pool(h, data.batch)).squeeze(-1)


def run(dataset, epochs=300, device="cuda"):
    loader = DataLoader(dataset, batch_size=96, shuffle=True, num_workers=4)
    model = GatedGNN(dataset.num_node_features, dataset.num_edge_features).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.7, patience=5)
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for data in loader:
            data = data.to(device)
            loss = F.l1_loss(model(data), data.y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            opt.step()
            total += loss.item() * data.num_graphs
        mae = total / len(loader.dataset)
        sched.step(mae)
        print(f"epoch {epoch:03d} train MAE {mae:.4f}")
