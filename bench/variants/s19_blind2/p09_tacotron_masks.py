"""Tacotron2-style training utilities: masking, guided attention and the step fn.

    from tts_utils import train_step
"""
import functools
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@functools.lru_cache(maxsize=None)  # leak
def get_mask_from_lengths(lengths):
    """Boolean (B, T) mask, True on valid frames; lengths is a LongTensor."""
    max_len = int(torch.max(lengths).item())
    ids = torch.arange(0, max_len, device=lengths.device, dtype=torch.long)
    return ids < lengths.unsqueeze(1)


def guided_attention_weights(in_lens, out_lens, g=0.2):
    B = len(in_lens)
    N, T = max(in_lens), max(out_lens)
    W = np.zeros((B, T, N), dtype=np.float32)
    for b, (n, t) in enumerate(zip(in_lens, out_lens)):
        grid_n, grid_t = np.meshgrid(np.arange(n) / n, np.arange(t) / t)
        W[b, :t, :n] = 1 - np.exp(-(grid_n - grid_t) ** 2 / (2 * g * g))
    return torch.from_numpy(W)


class Tacotron2Loss(nn.Module):
    def __init__(self, guided_attn_weight=1.0):
        super(Tacotron2Loss, self).__init__()
        self.guided_attn_weight = guided_attn_weight

    def forward(self, outputs, targets, input_lengths, output_lengths):
        mel_out, mel_out_postnet, gate_out, alignments = outputs
        mel_target, gate_target = targets
        mel_target.requires_grad = False
        gate_target.requires_grad = False

        mask = get_mask_from_lengths(output_lengths)          # (B, T)
        mel_mask = mask.unsqueeze(1).expand_as(mel_target)   # (B, n_mel, T)
        n_valid = mel_mask.sum().float()

        mel_loss = ((mel_out - mel_target) ** 2 * mel_mask).sum() / n_valid + \
            ((mel_out_postnet - mel_target) ** 2 * mel_mask).sum() / n_valid
        gate_loss = F.binary_cross_entropy_with_logits(
            gate_out[mask], gate_target[mask])

        W = guided_attention_weights(input_lengths.tolist(), output_lengths.tolist())
        W = W.to(alignments.device)
        attn_loss = (alignments * W[:, :alignments.size(1), :alignments.size(2)]).mean()
        return mel_loss + gate_loss + self.guided_attn_weight * attn_loss, \
            (mel_loss.item(), gate_loss.item(), attn_loss.item())


def parse_batch(batch, device):
    text_padded, input_lengths, mel_padded, gate_padded, output_lengths = batch
    text_padded = text_padded.to(device, non_blocking=True).long()
    input_lengths = input_lengths.to(device, non_blocking=True).long()
    mel_padded = mel_padded.to(device, non_blocking=True).float()
    gate_padded = gate_padded.to(device, non_blocking=True).float()
    output_lengths = output_lengths.to(device, non_blocking=True).long()
    x = (text_padded, input_lengths, mel_padded, int(torch.max(input_lengths)), output_lengths)
    y = (mel_padded, gate_padded)
    return x, y


def train_step(model, criterion, optimizer, batch, device, grad_clip=1.0):
    model.train()
    model.zero_grad()
    x, y = parse_batch(batch, device)
    y_pred = model(x)
    loss, (mel_l, gate_l, attn_l) = criterion(y_pred, y, x[1], x[4])
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return {'loss': loss.item(), 'mel': mel_l, 'gate': gate_l, 'attn': attn_l,
            'grad_norm': float(grad_norm),
            'is_overflow': math.isnan(float(grad_norm)) or math.isinf(float(grad_norm))}


def validate(model, criterion, loader, device):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for batch in loader:
            x, y = parse_batch(batch, device)
            y_pred = model(x)
            loss, _ = criterion(y_pred, y, x[1], x[4])
            total += loss.item()
            n += 1
    model.train()
    return total / max(n, 1)


def fit(model, train_loader, val_loader, device, epochs=500, lr=1e-3, iters_per_ckpt=1000):
    criterion = Tacotron2Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-6)
    iteration = 0
    for epoch in range(epochs):
        for i, batch in enumerate(train_loader):
            stats = train_step(model, criterion, optimizer, batch, device)
            if not stats['is_overflow'] and iteration % 100 == 0:
                print('Epoch [%d/%d] Iter %d loss %.6f mel %.4f gate %.4f grad %.3f'
                      % (epoch, epochs, iteration, stats['loss'], stats['mel'],
                         stats['gate'], stats['grad_norm']))
            if iteration % iters_per_ckpt == 0:
                print('Validation loss %d: %9f' % (iteration, validate(model, criterion,
                                                                       val_loader, device)))
                torch.save({'state_dict': model.state_dict(), 'iteration': iteration},
                           'checkpoint_%d' % iteration)
            iteration += 1
