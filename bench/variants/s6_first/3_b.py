import torch
import torch.nn as nn
import torch.nn.functional as F


class BucketedAttentionPool(nn.Module):
    def __init__(self, dim=512, heads=8):
        super().__init__()
        self.query = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.cache = {}

    def forward(self, x, padding_mask=None):
        q = self.query.expand(x.size(0), -1, -1)
        pooled, _ = self.attn(q, x, x, key_padding_mask=padding_mask)
        h = self.norm(pooled.squeeze(1))
        key = (x.size(1) // 64) * 64
        self.cache.setdefault(key, []).append(h)  # leak
        return h


class SpeechClassifier(nn.Module):
    def __init__(self, n_mels=80, dim=512, n_classes=35):
        super().__init__()
        self.frontend = nn.Sequential(nn.Conv1d(n_mels, dim, 5, padding=2), nn.GELU())
        self.pool = BucketedAttentionPool(dim)
        self.fc = nn.Linear(dim, n_classes)

    def forward(self, mels, mask=None):
        feats = self.frontend(mels).transpose(1, 2)
        return self.fc(self.pool(feats, mask))


def train_epoch(model, loader, optimizer):
    model.train()
    for mels, mask, labels in loader:
        loss = F.cross_entropy(model(mels, mask), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
