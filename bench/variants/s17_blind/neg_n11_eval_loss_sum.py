import math

import torch
import torch.nn as nn
from tqdm import tqdm


class CharLM(nn.Module):
    def __init__(self, vocab, d=512, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.gru = nn.GRU(d, d, num_layers=layers, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, x):
        h, _ = self.gru(self.emb(x))
        return self.out(h)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    total_loss = 0.0
    n_tokens = 0
    crit = nn.CrossEntropyLoss(reduction="sum")
    for x, y in tqdm(loader, desc="eval", leave=False):
        x, y = x.to(device), y.to(device)
        logits = model(x)
        loss = crit(logits.view(-1, logits.size(-1)), y.view(-1))
        total_loss += loss
        n_tokens += y.numel()
    avg = float(total_loss) / n_tokens
    return avg, math.exp(avg)


def train(model, train_loader, val_loader, epochs=10, device="cuda"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    for epoch in range(epochs):
        model.train()
        for x, y in tqdm(train_loader, desc=f"train {epoch}"):
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        sched.step()
        val_loss, ppl = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: val_loss={val_loss:.3f} ppl={ppl:.1f}")
