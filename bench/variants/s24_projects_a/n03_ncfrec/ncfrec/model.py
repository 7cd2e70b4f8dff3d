"""NeuMF = GMF + MLP towers fused by a final linear layer."""
import torch
import torch.nn as nn


class NeuMF(nn.Module):
    def __init__(self, n_users: int, n_items: int, mf_dim: int = 16,
                 mlp_layers=(64, 32, 16, 8), dropout: float = 0.0):
        super().__init__()
        self.user_mf = nn.Embedding(n_users, mf_dim)
        self.item_mf = nn.Embedding(n_items, mf_dim)
        self.user_mlp = nn.Embedding(n_users, mlp_layers[0] // 2)
        self.item_mlp = nn.Embedding(n_items, mlp_layers[0] // 2)
        mlp = []
        for a, b in zip(mlp_layers[:-1], mlp_layers[1:]):
            mlp += [nn.Linear(a, b), nn.ReLU(), nn.Dropout(dropout)]
        self.mlp = nn.Sequential(*mlp)
        self.predict = nn.Linear(mf_dim + mlp_layers[-1], 1)
        self._init()

    def _init(self):
        for emb in (self.user_mf, self.item_mf, self.user_mlp, self.item_mlp):
            nn.init.normal_(emb.weight, std=0.01)
        for m in self.mlp:
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
        nn.init.kaiming_uniform_(self.predict.weight, a=1, nonlinearity="sigmoid")

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        gmf = self.user_mf(users) * self.item_mf(items)
        mlp = self.mlp(torch.cat([self.user_mlp(users), self.item_mlp(items)], dim=-1))
        return self.predict(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)

    @torch.no_grad()
    def score_all(self, user: int, n_items: int, device=None) -> torch.Tensor:
        """Scores of every item for one user (used for full-ranking evaluation)."""
        items = torch.arange(n_items, device=device)
        users = torch.full_like(items, user)
        return self.forward(users, items)


class GMF(nn.Module):
    """Generalised matrix factorisation baseline (NeuMF without the MLP tower)."""

    def __init__(self, n_users: int, n_items: int, dim: int = 16):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.out = nn.Linear(dim, 1)
        nn.init.normal_(self.user.weight, std=0.01)
        nn.init.normal_(self.item.weight, std=0.01)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return self.out(self.user(users) * self.item(items)).squeeze(-1)
