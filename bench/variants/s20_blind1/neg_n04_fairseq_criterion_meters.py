"""Label-smoothed cross entropy criterion with a tiny metrics registry.

Logging outputs returned by :meth:`LabelSmoothedCE.forward` are reduced by
:meth:`LabelSmoothedCE.reduce_metrics` (called once per update by the trainer)
and pushed into whichever aggregators are active at that moment. Only
``.data`` views go into the logging outputs so the meters never see autograd
history.
"""
import contextlib
import math
import time
from collections import OrderedDict

import torch
import torch.nn.functional as F

# name -> MetersDict ; "default" is always active, "train" lives for the whole run
_aggregators = OrderedDict()
_active = []


class AverageMeter:
    """Weighted running average of a scalar."""

    def __init__(self, round=None):
        self.round = round
        self.reset()

    def reset(self):
        self.val = None
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if val is None:
            return
        self.val = val
        if n > 0:
            self.sum = self.sum + val * n
            self.count += n

    @property
    def avg(self):
        return self.sum / self.count if self.count > 0 else self.val

    @property
    def smoothed_value(self):
        val = self.avg
        if self.round is not None and val is not None:
            val = round(float(val), self.round)
        return val


class TimeMeter:
    def __init__(self):
        self.start = time.perf_counter()
        self.n = 0

    def update(self, val=1):
        self.n += val

    @property
    def smoothed_value(self):
        elapsed = time.perf_counter() - self.start
        return self.n / elapsed if elapsed > 0 else 0.0


class MetersDict(OrderedDict):
    def get_smoothed_values(self):
        return {k: m.smoothed_value for k, m in self.items()}


@contextlib.contextmanager
def aggregate(name):
    agg = _aggregators.setdefault(name, MetersDict())
    _active.append(agg)
    try:
        yield agg
    finally:
        _active.pop()


def log_scalar(key, value, weight=1, round=None):
    for agg in _active:
        if key not in agg:
            agg[key] = AverageMeter(round=round)
        agg[key].update(value, weight)


def log_speed(key, value):
    for agg in _active:
        agg.setdefault(key, TimeMeter()).update(value)


class LabelSmoothedCE(torch.nn.Module):
    def __init__(self, padding_idx, eps=0.1, sentence_avg=False):
        super().__init__()
        self.padding_idx = padding_idx
        self.eps = eps
        self.sentence_avg = sentence_avg

    def compute_loss(self, lprobs, target):
        lprobs = lprobs.view(-1, lprobs.size(-1))
        target = target.view(-1)
        mask = target.ne(self.padding_idx)
        nll = -lprobs.gather(dim=-1, index=target.unsqueeze(-1)).squeeze(-1)
        smooth = -lprobs.sum(dim=-1)
        nll = nll.masked_fill(~mask, 0.0).sum()
        smooth = smooth.masked_fill(~mask, 0.0).sum()
        eps_i = self.eps / lprobs.size(-1)
        loss = (1.0 - self.eps) * nll + eps_i * smooth
        return loss, nll

    def forward(self, model, sample):
        net_output = model(**sample["net_input"])
        lprobs = F.log_softmax(net_output, dim=-1, dtype=torch.float32)
        loss, nll_loss = self.compute_loss(lprobs, sample["target"])
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {
            "loss": loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs):
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        nll_sum = sum(log.get("nll_loss", 0) for log in logging_outputs)
        ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
        sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
        log_scalar("loss", loss_sum / sample_size / math.log(2), sample_size, round=3)
        log_scalar("nll_loss", nll_sum / ntokens / math.log(2), ntokens, round=3)
        log_speed("wps", ntokens)


def train_step(model, criterion, optimizer, samples):
    """One update over a list of (possibly accumulated) samples."""
    model.train()
    optimizer.zero_grad()
    logging_outputs = []
    with aggregate("train"):
        for sample in samples:
            loss, _, log_out = criterion(model, sample)
            loss.backward()
            logging_outputs.append(log_out)
        optimizer.step()
        criterion.reduce_metrics(logging_outputs)
    return _aggregators["train"].get_smoothed_values()
