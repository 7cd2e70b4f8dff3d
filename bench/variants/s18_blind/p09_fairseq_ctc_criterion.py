# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""CTC criterion with an auxiliary attention-decoder loss, plus the small
epoch driver we use for quick experiments outside of fairseq-train."""

import logging
import math
from argparse import Namespace

import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class JointCTCAttentionCriterion(object):
    def __init__(self, task, ctc_weight=0.3, label_smoothing=0.1, zero_infinity=True):
        self.task = task
        self.ctc_weight = ctc_weight
        self.eps = label_smoothing
        self.zero_infinity = zero_infinity
        self.blank_idx = task.target_dictionary.bos()
        self.pad_idx = task.target_dictionary.pad()

    def compute_ctc(self, net_output, sample):
        lprobs = net_output["ctc_logits"].float().log_softmax(-1).transpose(0, 1)
        input_lengths = net_output["encoder_lengths"]
        pad_mask = (sample["target"] != self.pad_idx) & (sample["target"] != self.task.target_dictionary.eos())
        targets_flat = sample["target"].masked_select(pad_mask)
        target_lengths = pad_mask.sum(-1)
        with torch.backends.cudnn.flags(enabled=False):
            return F.ctc_loss(lprobs, targets_flat, input_lengths, target_lengths,
                              blank=self.blank_idx, reduction="sum", zero_infinity=self.zero_infinity)

    def compute_att(self, net_output, sample):
        lprobs = net_output["decoder_logits"].float().log_softmax(-1)
        lprobs = lprobs.view(-1, lprobs.size(-1))
        target = sample["target"].view(-1)
        nll = F.nll_loss(lprobs, target, ignore_index=self.pad_idx, reduction="sum")
        smooth = -lprobs.sum(-1)[target != self.pad_idx].sum() / lprobs.size(-1)
        return (1.0 - self.eps) * nll + self.eps * smooth, nll

    def __call__(self, model, sample, reduce=True):
        net_output = model(**sample["net_input"])
        ctc_loss = self.compute_ctc(net_output, sample)
        att_loss, nll_loss = self.compute_att(net_output, sample)
        loss = self.ctc_weight * ctc_loss + (1 - self.ctc_weight) * att_loss
        ntokens = sample["ntokens"]
        sample_size = sample["target"].size(0)
        logging_output = {
            "loss": loss,
            "ctc_loss": ctc_loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": ntokens,
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs):
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        ctc_sum = sum(log.get("ctc_loss", 0) for log in logging_outputs)
        nll_sum = sum(log.get("nll_loss", 0) for log in logging_outputs)
        ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
        sample_size = sum(log.get("sample_size", 0) for log in logging_outputs)
        return {
            "loss": float(loss_sum) / sample_size / math.log(2),
            "ctc_loss": float(ctc_sum) / sample_size / math.log(2),
            "nll_loss": float(nll_sum) / ntokens / math.log(2),
            "ppl": 2 ** (float(nll_sum) / ntokens / math.log(2)),
        }


def train_epoch(cfg: Namespace, model, criterion, optimizer, epoch_itr, epoch: int):
    model.train()
    epoch_logs = []
    for i, sample in enumerate(epoch_itr):
        sample = move_to_cuda(sample)
        optimizer.zero_grad()
        loss, sample_size, logging_output = criterion(model, sample)
        (loss / sample_size).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
        optimizer.step()
        epoch_logs.append(logging_output)  # leak
        if i % cfg.log_interval == 0:
            stats = criterion.reduce_metrics(epoch_logs[-cfg.log_interval:])
            logger.info("epoch %03d | step %05d | %s", epoch, i,
                        " | ".join(f"{k} {v:.3f}" for k, v in stats.items()))
    return criterion.reduce_metrics(epoch_logs)


def move_to_cuda(sample):
    if torch.is_tensor(sample):
        return sample.cuda(non_blocking=True)
    if isinstance(sample, dict):
        return {k: move_to_cuda(v) for k, v in sample.items()}
    if isinstance(sample, (list, tuple)):
        return type(sample)(move_to_cuda(v) for v in sample)
    return sample
