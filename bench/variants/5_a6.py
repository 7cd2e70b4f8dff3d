import torch


class Tracker:
    def __init__(self):
        self.embeddings = []

    def update(self, emb):
        self.embeddings.append(emb)  # leak


def train(model, loader, opt, tracker):
    for x, y in loader:
        emb = model(x)
        loss = emb.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.update(emb)
