import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class GRU4Rec(nn.Module):
    """Session-based next-item recommender with a GRU over item sequences."""

    def __init__(self, n_items, emb_dim=64, hidden_size=100, dropout=0.25):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, emb_dim, padding_idx=0)
        self.gru = nn.GRU(emb_dim, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(hidden_size, n_items)
        self.intermediates = {}

    def forward(self, item_seq, seq_len, session_ids):
        emb = self.dropout(self.item_emb(item_seq))
        packed = nn.utils.rnn.pack_padded_sequence(
            emb, seq_len.cpu(), batch_first=True, enforce_sorted=False
        )
        _, h_n = self.gru(packed)
        last = h_n[-1]
        logits = self.out(last)
        for name, value in (("embedding", emb), ("session_state", last), ("logits", logits)):
            self.intermediates[name] = value.detach()
        return logits


def train_one_epoch(model, loader: DataLoader, optimizer, device):
    model.train()
    total, n = 0.0, 0
    for item_seq, seq_len, target, session_ids in loader:
        item_seq, target = item_seq.to(device), target.to(device)
        logits = model(item_seq, seq_len, session_ids)
        loss = F.cross_entropy(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * target.size(0)
        n += target.size(0)
    return total / max(n, 1)


def recall_at_k(logits, target, k=20):
    topk = logits.topk(k, dim=-1).indices
    return (topk == target.unsqueeze(-1)).any(dim=-1).float().mean().item()


def main(train_ds, n_items, epochs=10):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = GRU4Rec(n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(train_ds, batch_size=512, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        loss = train_one_epoch(model, loader, optimizer, device)
        print(f"epoch {epoch}: loss={loss:.4f}")
