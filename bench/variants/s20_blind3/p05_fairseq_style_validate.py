# Copyright (c) the speech-mt team.
"""Label-smoothed CE criterion, lightweight meters and the validation loop used by
our fairseq-derived trainer (we dropped the fairseq dependency in v0.4)."""

import logging
import math
from collections import OrderedDict

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, round=None):
        self.round = round
        self.reset()

    def reset(self):
        self.val = None
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if val is not None:
            self.val = val
            if n > 0:
                self.sum = self.sum + val * n  # leak
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


class MetersDict(OrderedDict):
    def get_meter(self, key, round=3):
        if key not in self:
            self[key] = AverageMeter(round=round)
        return self[key]

    def log_scalar(self, key, value, weight=1, round=3):
        self.get_meter(key, round).update(value, weight)

    def reset(self):
        for m in self.values():
            m.reset()

    def get_smoothed_values(self):
        return OrderedDict((k, m.smoothed_value) for k, m in self.items())


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


class LabelSmoothedCrossEntropyCriterion(torch.nn.Module):
    def __init__(self, padding_idx, label_smoothing=0.1):
        super().__init__()
        self.padding_idx = padding_idx
        self.eps = label_smoothing

    def forward(self, model, sample, reduce=True):
        net_output = model(**sample["net_input"])
        lprobs = F.log_softmax(net_output[0], dim=-1, dtype=torch.float32)
        target = sample["target"]
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs.view(-1, lprobs.size(-1)), target.view(-1), self.eps,
            ignore_index=self.padding_idx,
        )
        sample_size = sample["ntokens"]
        logging_output = {
            "loss": loss.data,
            "nll_loss": nll_loss,
            "ntokens": sample["ntokens"],
            "nsentences": target.size(0),
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output


def reduce_metrics(meters, logging_outputs):
    ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
    sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
    loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
    nll_loss_sum = sum(log.get("nll_loss", 0) for log in logging_outputs)
    meters.log_scalar("loss", loss_sum / sample_size / math.log(2), sample_size)
    meters.log_scalar("nll_loss", nll_loss_sum / ntokens / math.log(2), ntokens)


def move_to_cuda(sample):
    if torch.is_tensor(sample):
        return sample.cuda(non_blocking=True)
    if isinstance(sample, dict):
        return {k: move_to_cuda(v) for k, v in sample.items()}
    if isinstance(sample, list):
        return [move_to_cuda(v) for v in sample]
    return sample


def validate(model, criterion, valid_itr, subset="valid", log_interval=100):
    """Evaluate on a validation subset and return averaged stats."""
    model.eval()
    criterion.eval()
    meters = MetersDict()
    for i, sample in enumerate(valid_itr):
        sample = move_to_cuda(sample)
        _, _, logging_output = criterion(model, sample)
        reduce_metrics(meters, [logging_output])
        if i % log_interval == 0:
            logger.info("| %s | step %d | %s", subset, i, dict(meters.get_smoothed_values()))
    stats = meters.get_smoothed_values()
    stats["ppl"] = round(2 ** stats["nll_loss"], 2) if stats.get("nll_loss") is not None else None
    logger.info("| %s on %s subset | %s", "end of validation", subset, dict(stats))
    return stats
