import torch

features = []


def hook_fn(module, input, output):
    features.append(output.cpu())  # leak


def extract(model, loader):
    handle = model.layer4.register_forward_hook(hook_fn)
    for x, _ in loader:
        model(x)
    handle.remove()
    return torch.cat(features)
