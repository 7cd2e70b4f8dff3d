"""Normalisation layers for padded sequence batches.

``MaskedBatchNorm1d`` behaves like ``nn.BatchNorm1d`` over (B, C, T) inputs but
ignores padded frames when computing batch statistics.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _masked_moments(x, mask, dims):
    mask = mask.to(x.dtype)
    n = mask.sum(dim=dims, keepdim=True).clamp_min(1.0)
    mean = (x * mask).sum(dim=dims, keepdim=True) / n
    var = (((x - mean) * mask) ** 2).sum(dim=dims, keepdim=True) / n
    return mean, var, n


class MaskedBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def reset_running_stats(self):
        self.running_mean.zero_()
        self.running_var.fill_(1.0)
        self.num_batches_tracked.zero_()

    def _factor(self):
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked)
        return self.momentum

    @torch.no_grad()
    def _update_running_stats(self, mean, var, count):
        self.num_batches_tracked += 1
        factor = self._factor()
        unbiased_var = var * count / max(count - 1.0, 1.0)
        self.running_mean.mul_(1 - factor).add_(mean * factor)
        self.running_var.mul_(1 - factor).add_(unbiased_var * factor)

    def forward(self, x, mask=None):
        if mask is None or not self.training:
            return F.batch_norm(
                x, self.running_mean, self.running_var, self.weight, self.bias,
                training=self.training, momentum=self.momentum or 0.0, eps=self.eps)

        m = mask.unsqueeze(1)
        mean, var, n = _masked_moments(x, m, dims=(0, 2))
        self._update_running_stats(mean.squeeze(), var.squeeze(), float(n.reshape(-1)[0]))

        out = (x - mean) / torch.sqrt(var + self.eps)
        if self.affine:
            out = out * self.weight[None, :, None] + self.bias[None, :, None]
        return out * m


class ConvNormAct(nn.Sequential):
    def __init__(self, cin, cout, kernel_size=3, stride=1, act=nn.SiLU):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, kernel_size, stride, padding=kernel_size // 2,
                              bias=False)
        self.norm = MaskedBatchNorm1d(cout)
        self.act = act()
        self.stride = stride
        nn.init.kaiming_normal_(self.conv.weight, a=math.sqrt(5))

    def forward(self, x, mask=None):
        x = self.conv(x)
        if mask is not None and self.stride > 1:
            mask = mask[:, :: self.stride]
        x = self.norm(x, mask)
        return self.act(x), mask


class ConvSubsampler(nn.Module):
    def __init__(self, n_mels=80, channels=(256, 256, 512), strides=(2, 2, 1)):
        super().__init__()
        layers, cin = [], n_mels
        for c, s in zip(channels, strides):
            layers.append(ConvNormAct(cin, c, stride=s))
            cin = c
        self.layers = nn.ModuleList(layers)

    def forward(self, feats, lengths):
        t = feats.shape[-1]
        mask = torch.arange(t, device=feats.device)[None, :] < lengths[:, None]
        x = feats
        for layer in self.layers:
            x, mask = layer(x, mask)
        return x, mask.sum(-1)
