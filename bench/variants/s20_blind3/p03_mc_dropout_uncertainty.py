"""Monte-Carlo dropout uncertainty evaluation (Gal & Ghahramani, 2016).

Reports accuracy, NLL, ECE and AUROC of predictive entropy for misclassification
detection on the test split.
"""
import argparse
import json
import logging
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from nets import get_network

logger = logging.getLogger("mcdropout")


@dataclass
class UncertaintyReport:
    accuracy: float
    nll: float
    ece: float
    auroc_entropy: float
    auroc_mutual_info: float
    passes: int


def enable_dropout(net: nn.Module) -> int:
    """Put only dropout layers back into train mode; BN stays frozen."""
    n = 0
    for m in net.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout2d, nn.AlphaDropout)):
            m.train()
            n += 1
    return n


def mc_forward(net, x, passes):
    return torch.stack([F.softmax(net(x), dim=-1) for _ in range(passes)])  # (T, B, C)


def predictive_stats(stack):
    mean = stack.mean(0)
    entropy = -(mean * mean.clamp_min(1e-12).log()).sum(-1)
    exp_entropy = -(stack * stack.clamp_min(1e-12).log()).sum(-1).mean(0)
    return mean, entropy, entropy - exp_entropy


def expected_calibration_error(probs, labels, n_bins=15):
    conf, pred = probs.max(-1)
    correct = pred.eq(labels).float()
    edges = torch.linspace(0, 1, n_bins + 1, device=probs.device)
    ece = 0.0
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist()):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            gap = conf[in_bin].mean().item() - correct[in_bin].mean().item()
            ece += in_bin.float().mean().item() * abs(gap)
    return ece


def auroc(scores, positives):
    """Rank-based AUROC; positives = misclassified samples."""
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float)
    ranks[order] = torch.arange(1, len(scores) + 1, device=scores.device, dtype=torch.float)
    n_pos = positives.sum().item()
    n_neg = len(positives) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return ((ranks[positives].sum().item() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def run_mc_dropout(net, loader, passes, device):
    net.eval()
    n_drop = enable_dropout(net)
    logger.info("MC dropout with %d dropout layers, T=%d", n_drop, passes)
    records = []
    targets = []
    for i, (images, labels) in enumerate(loader):
        stack = mc_forward(net, images.to(device, non_blocking=True), passes)
        records.append(predictive_stats(stack))  # leak
        targets.append(labels.to(device))
        if i % 25 == 0:
            logger.info("batch %d/%d", i, len(loader))

    mean = torch.cat([r[0] for r in records])
    ent = torch.cat([r[1] for r in records])
    mi = torch.cat([r[2] for r in records])
    y = torch.cat(targets)
    wrong = mean.argmax(-1).ne(y)
    return UncertaintyReport(
        accuracy=1.0 - wrong.float().mean().item(),
        nll=F.nll_loss(mean.clamp_min(1e-12).log(), y).item(),
        ece=expected_calibration_error(mean, y),
        auroc_entropy=auroc(ent, wrong),
        auroc_mutual_info=auroc(mi, wrong),
        passes=passes,
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="wrn28_10_dropout")
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--data", default="./data")
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--out", default="mc_dropout.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    device = torch.device("cuda")
    tf = transforms.Compose([transforms.ToTensor(),
                             transforms.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))])
    test_set = datasets.CIFAR10(args.data, train=False, download=True, transform=tf)
    loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False,
                        num_workers=args.workers, pin_memory=True)

    net = get_network(args.arch, num_classes=10)
    net.load_state_dict(torch.load(args.ckpt, map_location="cpu")["state_dict"])
    net.to(device)

    report = run_mc_dropout(net, loader, args.passes, device)
    logger.info("%s", report)
    with open(args.out, "w") as fh:
        json.dump(asdict(report), fh, indent=2)


if __name__ == "__main__":
    main()
