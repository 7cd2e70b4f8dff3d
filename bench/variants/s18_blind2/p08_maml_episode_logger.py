"""Second-order MAML on Omniglot-style N-way K-shot tasks.

Episode records are handed to a small logger which also writes a CSV at the end.
"""
import argparse
import csv
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout, track_running_stats=False),
                         nn.ReLU(), nn.MaxPool2d(2))


class ConvNet(nn.Module):
    def __init__(self, n_way, hidden=64):
        super().__init__()
        self.features = nn.Sequential(conv_block(1, hidden), conv_block(hidden, hidden),
                                      conv_block(hidden, hidden), conv_block(hidden, hidden))
        self.head = nn.Linear(hidden, n_way)

    def forward(self, x, params=None):
        if params is None:
            return self.head(self.features(x).flatten(1))
        return torch.func.functional_call(self, params, (x,))


class EpisodeLogger:
    def __init__(self, path):
        self.path = path
        self.records = []
        self.t0 = time.time()

    def log_episode(self, it, task_idx, outcome):
        rec = {"it": it, "task": task_idx, "time": time.time() - self.t0}
        rec.update(outcome)
        self.records.append(rec)  # leak

    def write(self):
        with open(self.path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["it", "task", "time", "query_loss", "query_acc"])
            w.writeheader()
            for r in self.records:
                w.writerow({k: (float(v) if torch.is_tensor(v) else v) for k, v in r.items()})


def inner_adapt(model, x_s, y_s, steps, inner_lr, first_order=False):
    params = dict(model.named_parameters())
    for _ in range(steps):
        loss = F.cross_entropy(model(x_s, params), y_s)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=not first_order)
        params = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
    return params


def run_task(model, task, args):
    x_s, y_s, x_q, y_q = task
    fast = inner_adapt(model, x_s, y_s, args.inner_steps, args.inner_lr, args.first_order)
    logits = model(x_q, fast)
    q_loss = F.cross_entropy(logits, y_q)
    q_acc = (logits.argmax(1) == y_q).float().mean()
    return q_loss, {"query_loss": q_loss, "query_acc": q_acc.detach()}


def sample_tasks(pool, n_tasks, n_way, k_shot, k_query, device):
    tasks = []
    for _ in range(n_tasks):
        classes = torch.randperm(pool.size(0))[:n_way]
        xs, ys, xq, yq = [], [], [], []
        for lbl, c in enumerate(classes):
            idx = torch.randperm(pool.size(1))[: k_shot + k_query]
            imgs = pool[c, idx]
            xs.append(imgs[:k_shot]); xq.append(imgs[k_shot:])
            ys += [lbl] * k_shot; yq += [lbl] * k_query
        tasks.append((torch.cat(xs).to(device), torch.tensor(ys, device=device),
                      torch.cat(xq).to(device), torch.tensor(yq, device=device)))
    return tasks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", default="data/omniglot_train.pt")
    ap.add_argument("--n-way", type=int, default=5)
    ap.add_argument("--k-shot", type=int, default=1)
    ap.add_argument("--k-query", type=int, default=15)
    ap.add_argument("--meta-batch", type=int, default=32)
    ap.add_argument("--iters", type=int, default=60000)
    ap.add_argument("--inner-steps", type=int, default=1)
    ap.add_argument("--inner-lr", type=float, default=0.4)
    ap.add_argument("--first-order", action="store_true")
    ap.add_argument("--csv", default="maml_episodes.csv")
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    pool = torch.load(args.pool)  # [n_classes, n_per_class, 1, 28, 28]
    model = ConvNet(args.n_way).to(device)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    elog = EpisodeLogger(args.csv)

    for it in range(args.iters):
        tasks = sample_tasks(pool, args.meta_batch, args.n_way, args.k_shot, args.k_query, device)
        meta_opt.zero_grad()
        accs = []
        for ti, task in enumerate(tasks):
            q_loss, outcome = run_task(model, task, args)
            (q_loss / len(tasks)).backward()
            elog.log_episode(it, ti, outcome)
            accs.append(outcome["query_acc"])
        meta_opt.step()
        if it % 500 == 0:
            print(f"it {it} meta-acc {torch.stack(accs).mean().item():.3f}")
    elog.write()


if __name__ == "__main__":
    main()
