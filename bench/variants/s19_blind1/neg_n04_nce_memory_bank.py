"""Non-parametric instance discrimination with a memory bank.

Reimplementation of the NCE memory bank of Wu et al., "Unsupervised Feature
Learning via Non-Parametric Instance Discrimination" (CVPR 2018), written as a
plain nn.Module so it works with DDP without a custom autograd Function.
The bank is never differentiated through: reads are detached and the
proximal update runs under no_grad.
"""
import math

import torch
from torch import nn


class AliasMethod(object):
    """O(1) sampling from a discrete distribution (Walker's alias method)."""

    def __init__(self, probs):
        if probs.sum() > 1:
            probs.div_(probs.sum())
        K = len(probs)
        self.prob = torch.zeros(K)
        self.alias = torch.LongTensor([0] * K)

        smaller, larger = [], []
        for kk, prob in enumerate(probs):
            self.prob[kk] = K * prob
            if self.prob[kk] < 1.0:
                smaller.append(kk)
            else:
                larger.append(kk)

        while len(smaller) > 0 and len(larger) > 0:
            small = smaller.pop()
            large = larger.pop()
            self.alias[small] = large
            self.prob[large] = (self.prob[large] - 1.0) + self.prob[small]
            if self.prob[large] < 1.0:
                smaller.append(large)
            else:
                larger.append(large)

        for last_one in smaller + larger:
            self.prob[last_one] = 1

    def cuda(self):
        self.prob = self.prob.cuda()
        self.alias = self.alias.cuda()
        return self

    def draw(self, N):
        K = self.alias.size(0)
        kk = torch.zeros(N, dtype=torch.long, device=self.prob.device).random_(0, K)
        prob = self.prob.index_select(0, kk)
        alias = self.alias.index_select(0, kk)
        b = torch.bernoulli(prob)
        oq = kk.mul(b.long())
        oj = alias.mul((1 - b).long())
        return oq + oj


class NCEAverage(nn.Module):
    """Memory bank + noise-contrastive scores.

    Args:
        input_size: embedding dim.
        output_size: number of instances in the dataset.
        K: number of negatives.
        T: temperature.
        momentum: proximal update factor for the memory entries.
    """

    def __init__(self, input_size, output_size, K=4096, T=0.07, momentum=0.5):
        super().__init__()
        self.n_data = output_size
        self.K = K
        self.unigrams = torch.ones(self.n_data)
        self.multinomial = AliasMethod(self.unigrams)
        # params: K, T, Z (normaliser, estimated on first batch), momentum
        self.register_buffer("params", torch.tensor([K, T, -1, momentum]))
        stdv = 1.0 / math.sqrt(input_size / 3)
        self.register_buffer(
            "memory", torch.rand(output_size, input_size).mul_(2 * stdv).add_(-stdv))

    def cuda(self, device=None):
        self.multinomial.cuda()
        return super().cuda(device)

    def _scores(self, x, weight):
        T = self.params[1].item()
        out = torch.bmm(weight, x.unsqueeze(2)).squeeze(2)
        return torch.exp(out / T)

    def forward(self, x, y, idx=None):
        """x: (B, D) l2-normalised embeddings, y: (B,) instance indices."""
        batch_size = x.size(0)
        K = int(self.params[0].item())
        Z = self.params[2].item()
        momentum = self.params[3].item()
        dim = self.memory.size(1)

        if idx is None:
            idx = self.multinomial.draw(batch_size * (K + 1)).view(batch_size, -1)
            idx.select(1, 0).copy_(y.data)

        weight = torch.index_select(self.memory, 0, idx.view(-1)).detach()
        weight = weight.view(batch_size, K + 1, dim)
        out = self._scores(x, weight)

        if Z < 0:
            self.params[2] = out.mean() * self.n_data
            Z = self.params[2].clone().detach().item()
            print("normalization constant Z is set to {:.1f}".format(Z))
        out = torch.div(out, Z).contiguous()

        # proximal update of the positives' memory slots
        with torch.no_grad():
            pos = torch.index_select(self.memory, 0, y.view(-1))
            pos.mul_(momentum)
            pos.add_(torch.mul(x, 1 - momentum))
            updated = pos.div(pos.pow(2).sum(1, keepdim=True).pow(0.5))
            self.memory.index_copy_(0, y, updated)

        return out


class NCECriterion(nn.Module):
    """Eq. (7) of the paper: binary NCE loss with uniform noise."""

    eps = 1e-7

    def __init__(self, n_data):
        super().__init__()
        self.n_data = n_data

    def forward(self, x):
        bsz = x.shape[0]
        m = x.size(1) - 1
        Pn = 1.0 / float(self.n_data)

        P_pos = x.select(1, 0)
        log_D1 = torch.div(P_pos, P_pos.add(m * Pn + self.eps)).log_()
        P_neg = x.narrow(1, 1, m)
        log_D0 = torch.div(P_neg.clone().fill_(m * Pn), P_neg.add(m * Pn + self.eps)).log_()

        loss = -(log_D1.sum(0) + log_D0.view(-1, 1).sum(0)) / bsz
        return loss
