import torch


def make_callback(t):
    return lambda: t.sum().item()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.callbacks = []

    def forward(self, x):
        h = self.fc(x)
        self.callbacks.append(make_callback(h))  # leak
        return h
