import torch
from torch import nn
from torch_geometric.nn import GCNConv


class DeepGCN(nn.Module):
    """GCN with jumping-knowledge style layer aggregation."""

    def __init__(self, in_dim, hid, out_dim, num_layers=4, dropout=0.5):
        super().__init__()
        self.convs = nn.ModuleList()
        self.convs.append(GCNConv(in_dim, hid))
        for _ in range(num_layers - 1):
            self.convs.append(GCNConv(hid, hid))
        self.lin = nn.Linear(hid * num_layers, out_dim)
        self.dropout = dropout

    def forward(self, x, edge_index):
        layer_outputs = []
        for conv in self.convs:
            x = conv(x, edge_index).relu()
            x = nn.functional.dropout(x, p=self.dropout, training=self.training)
            layer_outputs.append(x)
        jk = torch.cat(layer_outputs, dim=-1)
        return self.lin(jk)


def train(model, data, epochs=200):
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(1, epochs + 1):
        model.train()
        opt.zero_grad()
        out = model(data.x, data.edge_index)
        loss = nn.functional.cross_entropy(out[data.train_mask], data.y[data.train_mask])
        loss.backward()
        opt.step()
        if epoch % 20 == 0:
            model.eval()
            with torch.no_grad():
                pred = model(data.x, data.edge_index).argmax(-1)
                acc = (pred[data.val_mask] == data.y[data.val_mask]).float().mean()
            print(f"{epoch:03d} loss={loss.item():.4f} val_acc={acc.item():.4f}")


if __name__ == "__main__":
    from torch_geometric.datasets import Planetoid

    ds = Planetoid("data/Cora", "Cora")
    g = ds[0].to("cuda")
    m = DeepGCN(ds.num_features, 64, ds.num_classes).to("cuda")
    train(m, g)
