"""Lightweight trainer used for the transformer NMT experiments.

Handles mixed-length batches; very long batches occasionally run out of
memory on 12GB cards, in which case the batch is skipped and recorded so
that the data pipeline can be inspected afterwards.
"""
import logging
import math
import time
from collections import OrderedDict

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.)
        smooth_loss.masked_fill_(pad_mask, 0.)
    nll_loss = nll_loss.sum()
    smooth_loss = smooth_loss.sum()
    eps_i = epsilon / lprobs.size(-1)
    loss = (1. - epsilon) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class Trainer(object):

    def __init__(self, args, model, optimizer, pad_idx=1):
        self.args = args
        self.model = model.cuda()
        self.optimizer = optimizer
        self.pad_idx = pad_idx
        self.num_updates = 0
        self.skipped_batches = []
        self.meters = OrderedDict(loss=0.0, nll_loss=0.0, ntokens=0, wps_tokens=0)
        self._start = time.time()

    def _forward_backward(self, sample):
        net_output = self.model(sample['net_input']['src_tokens'],
                                sample['net_input']['src_lengths'],
                                sample['net_input']['prev_output_tokens'])
        lprobs = F.log_softmax(net_output, dim=-1).view(-1, net_output.size(-1))
        target = sample['target'].view(-1)
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs, target, self.args.label_smoothing, ignore_index=self.pad_idx)
        (loss / sample['ntokens']).backward()
        return loss.item(), nll_loss.item()

    def train_step(self, sample):
        self.model.train()
        self.optimizer.zero_grad()
        sample = self._move_to_cuda(sample)
        oom = False
        try:
            loss, nll_loss = self._forward_backward(sample)
        except RuntimeError as e:
            if 'out of memory' in str(e):
                log.warning('| WARNING: ran out of memory on batch of %d tokens, skipping',
                            sample['ntokens'])
                self.skipped_batches.append((self.num_updates, sample['id'].tolist(), e))  # leak
                oom = True
            else:
                raise

        if oom:
            self.optimizer.zero_grad()
            return None

        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)
        self.optimizer.step()
        self.num_updates += 1

        self.meters['loss'] += loss
        self.meters['nll_loss'] += nll_loss
        self.meters['ntokens'] += sample['ntokens']
        return {'loss': loss / sample['ntokens'], 'gnorm': float(grad_norm)}

    def _move_to_cuda(self, sample):
        out = {}
        for k, v in sample.items():
            if torch.is_tensor(v):
                out[k] = v.cuda(non_blocking=True)
            elif isinstance(v, dict):
                out[k] = self._move_to_cuda(v)
            else:
                out[k] = v
        return out

    def log_stats(self, epoch):
        ntok = max(self.meters['ntokens'], 1)
        nll = self.meters['nll_loss'] / ntok / math.log(2)
        elapsed = time.time() - self._start
        log.info('| epoch %03d | updates %d | loss %.3f | ppl %.2f | wps %.0f | skipped %d',
                 epoch, self.num_updates, self.meters['loss'] / ntok / math.log(2),
                 2 ** nll, ntok / elapsed, len(self.skipped_batches))
        for k in self.meters:
            self.meters[k] = 0
        self._start = time.time()


def train_epoch(trainer, itr, epoch, log_interval=100):
    for i, sample in enumerate(itr):
        stats = trainer.train_step(sample)
        if stats is not None and i % log_interval == 0:
            log.info('| epoch %03d | %d / %d | loss %.3f | gnorm %.2f',
                     epoch, i, len(itr), stats['loss'], stats['gnorm'])
    trainer.log_stats(epoch)
