import torch


class FeatureExtractor:
    def __init__(self, model, layers):
        self.model = model
        self.features = []
        for layer in layers:
            layer.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.features.append(output)  # leak

    def __call__(self, x):
        return self.model(x)
