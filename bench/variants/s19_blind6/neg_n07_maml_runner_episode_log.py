"""MAML for few-shot classification (Omniglot / miniImageNet).

Functional implementation: fast weights are dictionaries of tensors, the base network is
evaluated with torch.func.functional_call.
"""
import argparse
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

from data.episodes import EpisodeSampler


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout, track_running_stats=False),
                         nn.ReLU(), nn.MaxPool2d(2))


class ConvNet4(nn.Module):
    def __init__(self, in_ch=3, hidden=32, n_way=5, flat=800):
        super().__init__()
        self.features = nn.Sequential(conv_block(in_ch, hidden), conv_block(hidden, hidden),
                                      conv_block(hidden, hidden), conv_block(hidden, hidden))
        self.classifier = nn.Linear(flat, n_way)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class MAML:
    def __init__(self, net, inner_lr=0.01, inner_steps=5, first_order=False):
        self.net = net
        self.inner_lr = inner_lr
        self.inner_steps = inner_steps
        self.first_order = first_order

    def adapt(self, xs, ys):
        params = dict(self.net.named_parameters())
        for _ in range(self.inner_steps):
            logits = functional_call(self.net, params, (xs,))
            loss = F.cross_entropy(logits, ys)
            grads = torch.autograd.grad(loss, list(params.values()),
                                        create_graph=not self.first_order)
            params = {name: p - self.inner_lr * g for (name, p), g in zip(params.items(), grads)}
        return params

    def evaluate_task(self, task):
        xs, ys, xq, yq = task
        fast = self.adapt(xs, ys)
        logits = functional_call(self.net, fast, (xq,))
        loss = F.cross_entropy(logits, yq)
        acc = (logits.argmax(-1) == yq).float().mean()
        return {"query_loss": loss, "query_acc": acc}


class Runner:
    def __init__(self, args, device):
        self.args = args
        self.device = device
        self.net = ConvNet4(in_ch=3, n_way=args.n_way).to(device)
        self.maml = MAML(self.net, args.inner_lr, args.inner_steps, args.first_order)
        self.meta_opt = torch.optim.Adam(self.net.parameters(), lr=args.meta_lr)
        self.sampler = EpisodeSampler(args.data_root, "train", args.n_way, args.k_shot, args.k_query)

    def _to_device(self, task):
        return tuple(t.to(self.device) for t in task)

    def meta_step(self, batch):
        results = [self.maml.evaluate_task(self._to_device(task)) for task in batch]
        meta_loss = torch.stack([r["query_loss"] for r in results]).mean()
        self.meta_opt.zero_grad()
        meta_loss.backward()
        self.meta_opt.step()
        return {"meta_loss": meta_loss.item(),
                "acc": torch.stack([r["query_acc"].detach() for r in results]).mean().item()}

    def train_epoch(self, epoch):
        episode_log = {}
        for episode in range(self.args.episodes_per_epoch):
            batch = self.sampler.sample(self.args.meta_batch)
            outputs = self.meta_step(batch)
            episode_log[episode] = outputs
            if episode % 100 == 0:
                print(f"epoch {epoch} episode {episode} loss {outputs['meta_loss']:.4f} "
                      f"acc {outputs['acc']:.3f}")
        losses = [o["meta_loss"] for o in episode_log.values()]
        accs = [o["acc"] for o in episode_log.values()]
        return float(np.mean(losses)), float(np.mean(accs))

    def run(self):
        history = []
        for epoch in range(self.args.epochs):
            loss, acc = self.train_epoch(epoch)
            history.append({"epoch": epoch, "loss": loss, "acc": acc})
            torch.save(self.net.state_dict(), os.path.join(self.args.out_dir, "maml_last.pt"))
        with open(os.path.join(self.args.out_dir, "history.json"), "w") as f:
            json.dump(history, f, indent=2)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_root", default="data/miniimagenet")
    p.add_argument("--n_way", type=int, default=5)
    p.add_argument("--k_shot", type=int, default=1)
    p.add_argument("--k_query", type=int, default=15)
    p.add_argument("--meta_batch", type=int, default=4)
    p.add_argument("--inner_lr", type=float, default=0.01)
    p.add_argument("--inner_steps", type=int, default=5)
    p.add_argument("--meta_lr", type=float, default=1e-3)
    p.add_argument("--first_order", action="store_true")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--episodes_per_epoch", type=int, default=1000)
    p.add_argument("--out_dir", default="runs/maml")
    return p.parse_args()


if __name__ == "__main__":
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    Runner(args, torch.device("cuda" if torch.cuda.is_available() else "cpu")).run()
