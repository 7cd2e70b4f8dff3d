import dgl
import torch
import torch.nn as nn
import torch.nn.functional as F
from dgl.nn import GraphConv


class GCN(nn.Module):
    def __init__(self, in_feats, hidden, n_classes, n_layers=2, dropout=0.5):
        super().__init__()
        dims = [in_feats] + [hidden] * (n_layers - 1) + [n_classes]
        self.layers = nn.ModuleList(
            GraphConv(dims[i], dims[i + 1], activation=F.relu if i < n_layers - 1 else None)
            for i in range(n_layers)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, g, features):
        h = features
        for i, layer in enumerate(self.layers):
            if i > 0:
                h = self.dropout(h)
            h = layer(g, h)
        return h


class NodeFeatureRecorder:
    """Keeps the latest per-layer node representations for later t-SNE plots."""

    def __init__(self, model):
        self.node_feats = {}
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, GraphConv):
                self.handles.append(module.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.node_feats[name] = output.detach()
        return hook

    def remove(self):
        for h in self.handles:
            h.remove()


def train(g, n_epochs=200, lr=1e-2):
    device = torch.device("cuda")
    g = dgl.add_self_loop(g).to(device)
    features, labels = g.ndata["feat"], g.ndata["label"]
    train_mask = g.ndata["train_mask"]
    model = GCN(features.shape[1], 16, int(labels.max()) + 1).to(device)
    recorder = NodeFeatureRecorder(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    for epoch in range(n_epochs):
        model.train()
        logits = model(g, features)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % 10 == 0:
            acc = (logits[train_mask].argmax(1) == labels[train_mask]).float().mean()
            print(f"epoch {epoch:03d} loss {loss.item():.4f} train acc {acc.item():.3f}")
    recorder.remove()
    return model, recorder
