"""Deep Bayesian active learning (BALD with MC dropout) on image classification.

Strategy classes follow the usual layout of AL toolkits: `Strategy` owns the network
and the labelled/unlabelled index bookkeeping, subclasses implement `query`.
"""
import argparse
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset

from al_data import get_dataset, get_handler
from nets import get_net

logger = logging.getLogger(__name__)


class Strategy:
    def __init__(self, dataset, idxs_lb, net, args):
        self.dataset = dataset
        self.idxs_lb = idxs_lb
        self.net = net
        self.args = args
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.clf = None

    def update(self, idxs_lb):
        self.idxs_lb = idxs_lb

    def _loader(self, idxs, shuffle):
        return DataLoader(Subset(self.dataset, idxs), shuffle=shuffle,
                          batch_size=self.args.batch_size, num_workers=4)

    def train(self):
        self.clf = self.net().to(self.device)
        opt = torch.optim.SGD(self.clf.parameters(), lr=self.args.lr, momentum=0.9)
        loader = self._loader(np.where(self.idxs_lb)[0], shuffle=True)
        self.clf.train()
        for epoch in range(self.args.epochs):
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                out, _ = self.clf(x)
                loss = F.cross_entropy(out, y)
                opt.zero_grad()
                loss.backward()
                opt.step()

    def _mc_forward(self, x):
        logits, emb = self.clf(x)
        return {"probs": F.softmax(logits, dim=1), "embedding": emb}

    @torch.no_grad()
    def predict_prob_dropout_split(self, idxs, n_drop):
        loader = self._loader(idxs, shuffle=False)
        self.clf.train()  # keep dropout active
        chunks = []
        for d in range(n_drop):
            for x, _ in loader:
                out = self._mc_forward(x.to(self.device))
                chunks.append(out["probs"])
        probs = torch.cat(chunks).view(n_drop, len(idxs), -1)
        return probs.cpu()

    def query(self, n):
        raise NotImplementedError


class BALDDropout(Strategy):
    def __init__(self, dataset, idxs_lb, net, args, n_drop=10):
        super().__init__(dataset, idxs_lb, net, args)
        self.n_drop = n_drop

    def query(self, n):
        idxs_unlabeled = np.where(~self.idxs_lb)[0]
        probs = self.predict_prob_dropout_split(idxs_unlabeled, self.n_drop)
        pb = probs.mean(0)
        entropy1 = (-pb * torch.log(pb + 1e-10)).sum(1)
        entropy2 = (-probs * torch.log(probs + 1e-10)).sum(2).mean(0)
        mutual_info = entropy1 - entropy2
        return idxs_unlabeled[mutual_info.sort(descending=True)[1][:n].numpy()]


@torch.no_grad()
def test_accuracy(strategy, test_set):
    strategy.clf.eval()
    loader = DataLoader(test_set, batch_size=512, num_workers=4)
    correct = 0
    for x, y in loader:
        logits, _ = strategy.clf(x.to(strategy.device))
        correct += (logits.argmax(1).cpu() == y).sum().item()
    return correct / len(test_set)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="CIFAR10")
    parser.add_argument("--n_init", type=int, default=1000)
    parser.add_argument("--n_query", type=int, default=1000)
    parser.add_argument("--n_rounds", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    handler = get_handler(args.dataset)
    train_set, test_set = get_dataset(args.dataset, handler)
    idxs_lb = np.zeros(len(train_set), dtype=bool)
    idxs_lb[np.random.permutation(len(train_set))[:args.n_init]] = True

    strategy = BALDDropout(train_set, idxs_lb, get_net(args.dataset), args)
    strategy.train()
    logger.info("round 0: %d labelled, acc %.4f", idxs_lb.sum(), test_accuracy(strategy, test_set))
    for rd in range(1, args.n_rounds + 1):
        q = strategy.query(args.n_query)
        idxs_lb[q] = True
        strategy.update(idxs_lb)
        strategy.train()
        logger.info("round %d: %d labelled, acc %.4f", rd, idxs_lb.sum(), test_accuracy(strategy, test_set))


if __name__ == "__main__":
    main()
