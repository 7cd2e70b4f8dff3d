# Copyright (c) toy-nmt authors.
"""Label-smoothed cross entropy criterion with built-in smoothed meters.

Loosely follows fairseq's criterion layout: ``FairseqCriterion`` owns the
meters, concrete criterions push values into them from ``forward``.
"""
import argparse
import logging
import math
from collections import OrderedDict, deque

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def _item(value):
    if hasattr(value, "item"):
        return value.item()
    return value


class SmoothedValue(object):
    """Tracks a window of values and exposes smoothed statistics."""

    def __init__(self, window_size=50, fmt="{median:.4f} ({global_avg:.4f})"):
        self.window_size = window_size
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.values = deque(maxlen=self.window_size)
        self.total = 0.0
        self.count = 0

    def push(self, value, n=1):
        value = _item(value)
        self.values.append(value)
        self.total += value * n
        self.count += n

    @property
    def median(self):
        if not self.values:
            return 0.0
        srt = sorted(self.values)
        return srt[len(srt) // 2]

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

    def __str__(self):
        return self.fmt.format(median=self.median, global_avg=self.global_avg)


class FairseqCriterion(nn.Module):
    def __init__(self, task):
        super().__init__()
        self.task = task
        self.padding_idx = task.pad
        self.meters = OrderedDict()
        for name in self.meter_names():
            self.meters[name] = SmoothedValue()

    @classmethod
    def meter_names(cls):
        return ["loss"]

    def forward(self, model, sample, reduce=True):
        raise NotImplementedError

    def log_meters(self, num_updates):
        parts = ["{}={}".format(k, m) for k, m in self.meters.items()]
        logger.info("| num_updates %d | %s", num_updates, " | ".join(parts))


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    nll_loss = nll_loss.sum()
    smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class LabelSmoothedCrossEntropyCriterion(FairseqCriterion):
    def __init__(self, task, label_smoothing):
        super().__init__(task)
        self.eps = label_smoothing

    @classmethod
    def meter_names(cls):
        return ["loss", "nll_loss"]

    def forward(self, model, sample, reduce=True):
        net_output = model(sample["net_input"])
        lprobs = F.log_softmax(net_output, dim=-1).view(-1, net_output.size(-1))
        target = sample["target"].view(-1)
        loss, nll_loss = label_smoothed_nll_loss(lprobs, target, self.eps, ignore_index=self.padding_idx)
        sample_size = sample["ntokens"]
        self.meters["nll_loss"].push(nll_loss / sample_size / math.log(2), sample_size)
        self.meters["loss"].push(loss.item() / sample_size / math.log(2), sample_size)
        logging_output = {"ntokens": sample["ntokens"], "nsentences": target.size(0)}
        return loss, sample_size, logging_output


class DummyTask:
    pad = 1
    vocab = 500


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=1)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src_tokens):
        h, _ = self.rnn(self.emb(src_tokens))
        return self.out(h)


def fake_sample(task, bsz=16, tlen=24):
    toks = torch.randint(2, task.vocab, (bsz, tlen + 1))
    return {
        "net_input": toks[:, :-1],
        "target": toks[:, 1:].contiguous(),
        "ntokens": bsz * tlen,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-update", type=int, default=5000)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--log-interval", type=int, default=100)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s | %(message)s")

    task = DummyTask()
    model = TinyLM(task.vocab)
    criterion = LabelSmoothedCrossEntropyCriterion(task, args.label_smoothing)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)

    for num_updates in range(1, args.max_update + 1):
        sample = fake_sample(task)
        loss, sample_size, _ = criterion(model, sample)
        optimizer.zero_grad()
        (loss / sample_size).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        if num_updates % args.log_interval == 0:
            criterion.log_meters(num_updates)


if __name__ == "__main__":
    main()
