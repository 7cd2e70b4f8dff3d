import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class ActivationRecorder:
    def __init__(self, model: nn.Module, layer_names: list[str]):
        self.activations: dict[str, list[Tensor]] = {name: [] for name in layer_names}
        self.handles = []
        modules = dict(model.named_modules())
        for name in layer_names:
            self.handles.append(modules[name].register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name: str):
        def hook(module: nn.Module, inputs, output: Tensor) -> None:
            self.activations[name].append(output.detach())  # leak
        return hook

    def sparsity(self, name: str) -> float:
        latest = self.activations[name][-1]
        return (latest <= 0).float().mean().item()

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()


def train(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
          epochs: int, device: str = "cuda") -> None:
    recorder = ActivationRecorder(model, ["layer3", "layer4"])
    model.to(device).train()
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: layer4 dead-unit ratio {recorder.sparsity('layer4'):.3f}")
    recorder.close()
