import torch
import torch.nn as nn
import torch.nn.functional as F


class CharLSTM(nn.Module):
    def __init__(self, vocab=128, emb=64, hidden=256, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, layers, batch_first=True, dropout=0.2)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.out(h)


def train(model, loader, epochs=10, lr=2e-3, log_interval=200):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        running_loss = 0.0
        for i, (x, y) in enumerate(loader, start=1):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            running_loss += loss  # leak
            if i % log_interval == 0:
                print(f"[{epoch}, {i}] loss: {running_loss / i:.3f}")
        print(f"epoch {epoch} done, mean loss {running_loss / len(loader):.3f}")
