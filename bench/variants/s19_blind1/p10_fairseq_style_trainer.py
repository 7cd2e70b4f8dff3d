"""Compact fairseq-style training entry point for the speech-translation fork.

The criterion returns ``(loss, sample_size, logging_output)``; the trainer
does the backward/step and the epoch loop aggregates the logging outputs to
report epoch-level numbers (loss in base 2, like fairseq).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn.functional as F

from st_fork import data, models, optim
from st_fork.logging import progress_bar

logger = logging.getLogger("st_fork.train")


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

    def forward(self, model, sample):
        net_output = model(**sample["net_input"])
        lprobs = F.log_softmax(net_output[0], dim=-1, dtype=torch.float32)
        target = sample["target"]
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs.view(-1, lprobs.size(-1)), target.view(-1), self.eps,
            ignore_index=self.padding_idx)
        sample_size = sample["ntokens"]
        logging_output = {
            "loss": loss,
            "nll_loss": nll_loss,
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output


class Trainer:
    def __init__(self, args, model, criterion):
        self.args = args
        self.model = model.cuda()
        self.criterion = criterion.cuda()
        self.optimizer = optim.build_optimizer(args, self.model.parameters())
        self.lr_scheduler = optim.build_lr_scheduler(args, self.optimizer)
        self.num_updates = 0

    def train_step(self, sample):
        self.model.train()
        sample = data.move_to_cuda(sample)
        self.optimizer.zero_grad()
        loss, sample_size, logging_output = self.criterion(self.model, sample)
        (loss / max(sample_size, 1)).backward()
        if self.args.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)
        self.optimizer.step()
        self.num_updates += 1
        self.lr_scheduler.step_update(self.num_updates)
        return logging_output

    def get_lr(self):
        return self.optimizer.param_groups[0]["lr"]


def _format(agg):
    ntok = max(agg.get("ntokens", 0), 1)
    loss = float(agg["loss"]) / ntok / math.log(2)
    nll = float(agg["nll_loss"]) / ntok / math.log(2)
    return {"loss": round(loss, 3), "nll_loss": round(nll, 3), "ppl": round(2 ** nll, 2)}


def train_epoch(args, trainer, epoch_itr, epoch):
    itr = epoch_itr.next_epoch_itr(shuffle=True)
    progress = progress_bar.progress_bar(itr, log_interval=args.log_interval, epoch=epoch)
    agg = {}
    t0 = time.time()
    for i, sample in enumerate(progress):
        log_out = trainer.train_step(sample)
        for k, v in log_out.items():
            agg[k] = agg.get(k, 0) + v  # leak
        if i % args.log_interval == 0:
            stats = _format(agg)
            stats["lr"] = trainer.get_lr()
            progress.log(stats, step=trainer.num_updates)
    stats = _format(agg)
    stats["wall"] = round(time.time() - t0, 1)
    progress.print(stats, tag="train", step=trainer.num_updates)
    return stats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--arch", default="s2t_transformer_s")
    parser.add_argument("--max-epoch", type=int, default=100)
    parser.add_argument("--max-tokens", type=int, default=40000)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--clip-norm", type=float, default=10.0)
    parser.add_argument("--log-interval", type=int, default=100)
    optim.add_args(parser)
    args = parser.parse_args()

    task = data.SpeechToTextTask.setup_task(args)
    model = models.build_model(args, task)
    criterion = LabelSmoothedCrossEntropyCriterion(task.tgt_dict.pad(), args.label_smoothing)
    trainer = Trainer(args, model, criterion)
    logger.info("model %s, %d params", args.arch, sum(p.numel() for p in model.parameters()))

    epoch_itr = task.get_batch_iterator(task.dataset("train"), max_tokens=args.max_tokens)
    for epoch in range(1, args.max_epoch + 1):
        train_epoch(args, trainer, epoch_itr, epoch)


if __name__ == "__main__":
    main()
