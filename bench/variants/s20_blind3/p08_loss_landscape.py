"""1-D / 2-D loss-landscape slices with filter-normalised random directions
(Li et al., "Visualizing the Loss Landscape of Neural Nets", 2018).

    python landscape.py --ckpt ckpts/resnet56.pt --steps 41 --span 1.0 --max-batches 40
"""
import argparse
import copy
import json
import logging
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms

from cifar_models import resnet56

LOG = logging.getLogger("landscape")


def flat_params(net):
    return [p.data.clone() for p in net.parameters()]


def random_direction(net, ignore_bias_bn=True):
    """Filter-wise normalised gaussian direction, same shapes as the parameters."""
    direction = []
    for p in net.parameters():
        d = torch.randn_like(p)
        if p.dim() <= 1:
            if ignore_bias_bn:
                d.zero_()
            else:
                d.copy_(p.data)
        else:
            for d_f, w_f in zip(d, p.data):
                d_f.mul_(w_f.norm() / (d_f.norm() + 1e-10))
        direction.append(d)
    return direction


@torch.no_grad()
def set_weights(net, base, directions, coords):
    for i, p in enumerate(net.parameters()):
        delta = sum(c * d[i] for c, d in zip(coords, directions))
        p.copy_(base[i] + delta)


def dataset_loss(net, loader, criterion, device, max_batches=None):
    """Mean loss and accuracy of `net` over (at most `max_batches` of) `loader`."""
    net.eval()
    tot = 0.0
    correct = 0
    seen = 0
    for b, (x, y) in enumerate(loader):
        if max_batches is not None and b >= max_batches:
            break
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = net(x)
        tot = tot + criterion(logits, y) * x.size(0)  # leak
        correct += (logits.argmax(1) == y).sum().item()
        seen += x.size(0)
    return float(tot) / seen, correct / seen


def slice_1d(net, loader, criterion, device, steps, span, max_batches):
    base = flat_params(net)
    d = random_direction(net)
    results = []
    for alpha in torch.linspace(-span, span, steps).tolist():
        set_weights(net, base, [d], [alpha])
        t = time.time()
        loss, acc = dataset_loss(net, loader, criterion, device, max_batches)
        results.append({"alpha": alpha, "loss": loss, "acc": acc})
        LOG.info("alpha=%+.3f loss=%.4f acc=%.4f (%.1fs)", alpha, loss, acc, time.time() - t)
    set_weights(net, base, [d], [0.0])
    return results


def slice_2d(net, loader, criterion, device, steps, span, max_batches):
    base = flat_params(net)
    dx, dy = random_direction(net), random_direction(net)
    grid = torch.linspace(-span, span, steps).tolist()
    surface = []
    for a in grid:
        row = []
        for b in grid:
            set_weights(net, base, [dx, dy], [a, b])
            row.append(dataset_loss(net, loader, criterion, device, max_batches)[0])
        surface.append(row)
        LOG.info("row a=%+.3f done, min=%.4f", a, min(row))
    set_weights(net, base, [dx, dy], [0.0, 0.0])
    return {"grid": grid, "loss": surface}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--data", default="./data")
    ap.add_argument("--steps", type=int, default=41)
    ap.add_argument("--span", type=float, default=1.0)
    ap.add_argument("--two-d", action="store_true")
    ap.add_argument("--subset", type=int, default=10000)
    ap.add_argument("--max-batches", type=int, default=None)
    ap.add_argument("--bs", type=int, default=500)
    ap.add_argument("--out", default="landscape.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tf = transforms.Compose([transforms.ToTensor(),
                             transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))])
    train = datasets.CIFAR10(args.data, train=True, download=True, transform=tf)
    train = Subset(train, range(min(args.subset, len(train))))
    loader = DataLoader(train, batch_size=args.bs, shuffle=False, num_workers=4, pin_memory=True)

    net = resnet56()
    net.load_state_dict(torch.load(args.ckpt, map_location="cpu")["state_dict"])
    net = copy.deepcopy(net).to(device)
    criterion = nn.CrossEntropyLoss()

    fn = slice_2d if args.two_d else slice_1d
    res = fn(net, loader, criterion, device, args.steps, args.span, args.max_batches)
    with open(args.out, "w") as f:
        json.dump(res, f)
    LOG.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
