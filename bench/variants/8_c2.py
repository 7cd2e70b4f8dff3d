import torch


class Trainer:
    def __init__(self, model):
        self.model = model
        self.on_step_end = []

    def step(self, batch):
        out = self.model(batch)
        self.on_step_end.append(lambda: print(out.mean()))  # leak
        return out
