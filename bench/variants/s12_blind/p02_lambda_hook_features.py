import argparse
import logging

import torch
import torch.nn as nn
import torchvision

logger = logging.getLogger(__name__)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--feature-layer", default="layer4")
    return p.parse_args()


class FeatureDistillTrainer:
    """Trains a ResNet while collecting penultimate features for a later t-SNE."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.model = torchvision.models.resnet18(num_classes=10).cuda()
        self.features: list[torch.Tensor] = []
        layer = getattr(self.model, args.feature_layer)
        layer.register_forward_hook(lambda mod, inp, out: self.features.append(out.flatten(1)))  # leak
        self.opt = torch.optim.SGD(self.model.parameters(), lr=args.lr, momentum=0.9)
        self.criterion = nn.CrossEntropyLoss()

    def step(self, images: torch.Tensor, labels: torch.Tensor) -> float:
        logits = self.model(images.cuda(non_blocking=True))
        loss = self.criterion(logits, labels.cuda(non_blocking=True))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def fit(self, loader) -> None:
        for epoch in range(self.args.epochs):
            self.model.train()
            total = 0.0
            for i, (images, labels) in enumerate(loader):
                total += self.step(images, labels)
                if i % 100 == 0:
                    logger.info("epoch %d iter %d loss %.4f", epoch, i, total / (i + 1))


if __name__ == "__main__":
    args = parse_args()
    trainer = FeatureDistillTrainer(args)
    # trainer.fit(build_loader(args))
