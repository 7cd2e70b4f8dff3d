import torch


class GradCollector:
    def __init__(self, model):
        self.grads = []
        for p in model.parameters():
            p.register_hook(self.collect)

    def collect(self, grad):
        self.grads.append(grad)  # leak
