import torch
import torch.nn.functional as F
from torch import nn, Tensor
from torch.utils.data import DataLoader


class GradCAM:
    def __init__(self, model: nn.Module, target_layer: nn.Module):
        self.model = model
        self.target_layer = target_layer

    def __call__(self, images: Tensor, class_idx: Tensor) -> Tensor:
        store: dict[str, Tensor] = {}

        def save_activation(module: nn.Module, inputs, output: Tensor) -> None:
            store["act"] = output

        handle = self.target_layer.register_forward_hook(save_activation)
        try:
            logits = self.model(images)
        finally:
            handle.remove()
        score = logits.gather(1, class_idx[:, None]).sum()
        grads = torch.autograd.grad(score, store["act"])[0]
        weights = grads.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * store["act"].detach()).sum(1))
        return cam / cam.flatten(1).amax(1).clamp_min(1e-6)[:, None, None]


def explain(model: nn.Module, loader: DataLoader, device: str = "cuda") -> list[Tensor]:
    model.eval()
    cam = GradCAM(model, model.layer4)
    maps = []
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        maps.append(cam(images, labels).cpu())
    return maps
