import argparse

import torch
import torch.nn as nn
import torchvision


@torch.no_grad()
def extract_features(model: nn.Module, images: torch.Tensor, layers: list[str]) -> dict[str, torch.Tensor]:
    """Run one forward pass and return pooled activations of the requested layers."""
    feats: dict[str, torch.Tensor] = {}
    modules = dict(model.named_modules())
    handles = []
    try:
        for name in layers:
            handles.append(
                modules[name].register_forward_hook(
                    lambda m, i, o, name=name: feats.__setitem__(name, o.mean((2, 3)))
                )
            )
        model(images)
    finally:
        for h in handles:
            h.remove()
    return feats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", nargs="+", default=["layer2", "layer3", "layer4"])
    ap.add_argument("--out", default="feats.pt")
    args = ap.parse_args()

    model = torchvision.models.resnet50(weights="IMAGENET1K_V2").cuda().eval()
    dataset = torchvision.datasets.FakeData(size=512, transform=torchvision.transforms.ToTensor())
    loader = torch.utils.data.DataLoader(dataset, batch_size=64)

    bank: dict[str, list[torch.Tensor]] = {name: [] for name in args.layers}
    for images, _ in loader:
        feats = extract_features(model, images.cuda(), args.layers)
        for name, f in feats.items():
            bank[name].append(f.cpu())
    torch.save({k: torch.cat(v) for k, v in bank.items()}, args.out)


if __name__ == "__main__":
    main()
