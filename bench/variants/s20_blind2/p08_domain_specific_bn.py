"""Domain-specific batch normalisation (DSBN) for multi-source adaptation.

Affine parameters are shared across domains; batch statistics are tracked
separately for every domain in a single packed ``running_stats`` buffer of
shape ``(num_domains, 2, C)`` (mean, var).
"""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

logger = logging.getLogger("dsbn")


class DomainSpecificBatchNorm2d(nn.Module):
    def __init__(self, num_features: int, num_domains: int, eps: float = 1e-5,
                 momentum: float = 0.1):
        super().__init__()
        self.num_features = num_features
        self.num_domains = num_domains
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        stats = torch.zeros(num_domains, 2, num_features)
        stats[:, 1] = 1.0
        self.register_buffer("running_stats", stats)
        self.register_buffer("num_batches_tracked", torch.zeros(num_domains, dtype=torch.long))

    def extra_repr(self):
        return f"{self.num_features}, domains={self.num_domains}, eps={self.eps}"

    def forward(self, x: Tensor, domain: int) -> Tensor:
        if self.training:
            dims = (0, 2, 3)
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
            var_unbiased = x.var(dims, unbiased=True)
            m = self.momentum
            self.running_stats[domain].mul_(1 - m).add_(torch.stack([mean, var_unbiased]), alpha=m)  # leak
            self.num_batches_tracked[domain] += 1
        else:
            mean, var = self.running_stats[domain]
        x_hat = (x - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        return x_hat * self.weight[None, :, None, None] + self.bias[None, :, None, None]


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, num_domains, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn = DomainSpecificBatchNorm2d(cout, num_domains)

    def forward(self, x, domain):
        return F.relu(self.bn(self.conv(x), domain))


class DSBNNet(nn.Module):
    def __init__(self, num_classes=31, num_domains=3, width=64):
        super().__init__()
        chans = [3, width, width * 2, width * 4, width * 8]
        self.blocks = nn.ModuleList(
            ConvBlock(chans[i], chans[i + 1], num_domains, stride=1 if i == 0 else 2)
            for i in range(len(chans) - 1)
        )
        self.head = nn.Linear(chans[-1], num_classes)

    def forward(self, x, domain: int):
        for blk in self.blocks:
            x = blk(x, domain)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def train(model, source_loaders, target_loader, optimizer, device, iters):
    model.train()
    source_iters = [iter(l) for l in source_loaders]
    for it in range(iters):
        total = 0.0
        optimizer.zero_grad(set_to_none=True)
        for d, src_iter in enumerate(source_iters):
            try:
                xs, ys = next(src_iter)
            except StopIteration:
                source_iters[d] = iter(source_loaders[d])
                xs, ys = next(source_iters[d])
            xs, ys = xs.to(device), ys.to(device)
            loss = F.cross_entropy(model(xs, domain=d), ys)
            loss.backward()
            total += loss.item()
        optimizer.step()
        if it % 100 == 0:
            logger.info("iter %d  src loss %.4f", it, total / len(source_iters))


@torch.no_grad()
def evaluate(model, loader, domain, device):
    model.eval()
    correct = n = 0
    for x, y in loader:
        pred = model(x.to(device), domain=domain).argmax(1)
        correct += (pred == y.to(device)).sum().item()
        n += y.numel()
    return correct / max(n, 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    from datasets_office import build_loaders  # project-local
    device = torch.device("cuda")
    src_loaders, tgt_loader = build_loaders(["amazon", "dslr"], "webcam", batch_size=32)
    net = DSBNNet(num_domains=len(src_loaders) + 1).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    train(net, src_loaders, tgt_loader, opt, device, args.iters)
    logger.info("target acc (domain 0 stats): %.4f", evaluate(net, tgt_loader, 0, device))
