"""Label-smoothed cross entropy criterion plus running meters, fairseq style."""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self, round=None):
        self.round = round
        self.reset()

    def reset(self):
        self.val = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if val is not None:
            self.val = val
            if n > 0:
                self.sum = self.sum + val * n
                self.count += n

    @property
    def avg(self):
        return self.sum / self.count if self.count > 0 else self.val


class TimeMeter:
    def __init__(self):
        self.start = time.perf_counter()
        self.n = 0

    def update(self, n=1):
        self.n += n

    @property
    def rate(self):
        return self.n / max(time.perf_counter() - self.start, 1e-6)


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=-100):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    pad_mask = target.eq(ignore_index)
    nll_loss.masked_fill_(pad_mask, 0.0)
    smooth_loss.masked_fill_(pad_mask, 0.0)
    nll_loss, smooth_loss = nll_loss.sum(), smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class LabelSmoothedCrossEntropyCriterion(nn.Module):
    def __init__(self, eps=0.1, padding_idx=0):
        super().__init__()
        self.eps = eps
        self.padding_idx = padding_idx

    def forward(self, model, sample):
        logits = model(sample["net_input"])
        lprobs = F.log_softmax(logits, dim=-1).view(-1, logits.size(-1))
        target = sample["target"].view(-1)
        loss, nll_loss = label_smoothed_nll_loss(lprobs, target, self.eps, self.padding_idx)
        ntokens = target.ne(self.padding_idx).sum().item()
        logging_output = {
            "loss": loss.data.item(),
            "nll_loss": nll_loss.data.item(),
            "ntokens": ntokens,
        }
        return loss, ntokens, logging_output


def train_epoch(model, criterion, optimizer, itr, meters, log_interval=100):
    model.train()
    for i, sample in enumerate(itr):
        optimizer.zero_grad()
        loss, sample_size, log_out = criterion(model, sample)
        (loss / sample_size).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()

        meters["loss"].update(log_out["loss"] / sample_size / math.log(2), sample_size)
        meters["nll_loss"].update(log_out["nll_loss"] / sample_size / math.log(2), sample_size)
        meters["wps"].update(log_out["ntokens"])
        if i % log_interval == 0:
            logger.info("step %d | loss %.3f | nll %.3f | wps %.0f", i,
                        meters["loss"].avg, meters["nll_loss"].avg, meters["wps"].rate)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    args = parser.parse_args()

    model = nn.Sequential(nn.Embedding(args.vocab, 256), nn.Linear(256, args.vocab))
    criterion = LabelSmoothedCrossEntropyCriterion(args.label_smoothing)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    for epoch in range(args.epochs):
        meters = {"loss": AverageMeter(), "nll_loss": AverageMeter(), "wps": TimeMeter()}
        itr = ({"net_input": torch.randint(1, args.vocab, (16, 32)),
                "target": torch.randint(1, args.vocab, (16, 32))} for _ in range(1000))
        train_epoch(model, criterion, optimizer, itr, meters)
        logger.info("epoch %d done, loss %.3f", epoch, meters["loss"].avg)


if __name__ == "__main__":
    main()
