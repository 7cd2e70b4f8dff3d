import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def length_sorted_collate(batch):
    seqs, labels = zip(*batch)
    order = sorted(range(len(seqs)), key=lambda i: seqs[i].numel(), reverse=True)
    seqs = sorted(seqs, key=lambda t: t.numel(), reverse=True)
    labels = torch.tensor([labels[i] for i in order])
    lengths = torch.tensor([s.size(0) for s in seqs])
    return nn.utils.rnn.pad_sequence(seqs, batch_first=True), lengths, labels


class GRUClassifier(nn.Module):
    def __init__(self, vocab=10000, emb=128, hidden=256, n_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, n_classes)

    def forward(self, padded, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(padded), lengths, batch_first=True, enforce_sorted=True)
        _, h = self.gru(packed)
        return self.fc(h[-1])


def make_loader(dataset, batch_size=64):
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=length_sorted_collate, num_workers=2)
