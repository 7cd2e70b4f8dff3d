import torch as th
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    def __init__(self, in_dim=2048, proj_dim=128, temperature=0.07):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, in_dim), nn.ReLU(inplace=True), nn.Linear(in_dim, proj_dim))
        self.temperature = temperature
        self.register_buffer("bank", th.empty(0, proj_dim))

    def forward(self, feats_q, feats_k):
        q = F.normalize(self.mlp(feats_q), dim=1)
        with th.no_grad():
            k = F.normalize(self.mlp(feats_k), dim=1)
        l_pos = (q * k).sum(dim=1, keepdim=True)
        if self.bank.numel() > 0:
            l_neg = q @ self.bank.t()
            logits = th.cat([l_pos, l_neg], dim=1)
        else:
            logits = l_pos
        labels = th.zeros(q.size(0), dtype=th.long, device=q.device)
        self.bank = th.cat([self.bank, k.detach()], dim=0)  # leak
        return F.cross_entropy(logits / self.temperature, labels)


def pretrain(backbone, head, loader, epochs=100):
    params = list(backbone.parameters()) + list(head.parameters())
    opt = th.optim.SGD(params, lr=0.03, momentum=0.9, weight_decay=1e-4)
    for epoch in range(epochs):
        for view1, view2 in loader:
            loss = head(backbone(view1), backbone(view2))
            opt.zero_grad()
            loss.backward()
            opt.step()
