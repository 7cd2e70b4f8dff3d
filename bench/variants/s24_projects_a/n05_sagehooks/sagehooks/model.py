"""GraphSAGE encoder built on torch_geometric's SAGEConv."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv

from .hooks import FeatureCapture


class GraphSAGE(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int = 3,
                 dropout: float = 0.5, aggr: str = "mean"):
        super().__init__()
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        dims = [in_dim] + [hidden] * (num_layers - 1)
        for d_in in dims:
            self.convs.append(SAGEConv(d_in, hidden, aggr=aggr))
            self.norms.append(nn.LayerNorm(hidden))
        self.head = nn.Linear(hidden, out_dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        for conv, norm in zip(self.convs, self.norms):
            x = F.dropout(x, self.dropout, self.training)
            x = F.relu(norm(conv(x, edge_index)))
        return self.head(x)

    def capture(self, to_cpu: bool = True) -> FeatureCapture:
        """Return a FeatureCapture hooked onto every LayerNorm output.

        Use as a context manager so the hooks are removed afterwards::

            with model.capture() as cap:
                model(x, edge_index)
            feats = cap.features
        """
        named = [(f"layer{i}", norm) for i, norm in enumerate(self.norms)]
        return FeatureCapture(to_cpu=to_cpu).attach(named)

    @torch.no_grad()
    def embed(self, x: torch.Tensor, edge_index: torch.Tensor) -> dict:
        was_training = self.training
        self.eval()
        with self.capture() as cap:
            self(x, edge_index)
        self.train(was_training)
        return dict(cap.features)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
