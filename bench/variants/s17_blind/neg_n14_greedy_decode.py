"""Greedy decoding for a small seq2seq translation model, used in validation."""
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

BOS, EOS, PAD = 1, 2, 0


class Seq2Seq(nn.Module):
    def __init__(self, vocab: int = 16000, d_model: int = 512):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.transformer = nn.Transformer(d_model, nhead=8, num_encoder_layers=3,
                                          num_decoder_layers=3, batch_first=True)
        self.generator = nn.Linear(d_model, vocab)

    def encode(self, src):
        return self.transformer.encoder(self.emb(src))

    def decode_step(self, memory, ys):
        mask = self.transformer.generate_square_subsequent_mask(ys.size(1)).to(ys.device)
        h = self.transformer.decoder(self.emb(ys), memory, tgt_mask=mask)
        return self.generator(h[:, -1])


@torch.inference_mode()
def greedy_decode(model: Seq2Seq, src: torch.Tensor, max_len: int = 64) -> Tuple[torch.Tensor, List[torch.Tensor]]:
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
    step_logits = []
    for _ in range(max_len):
        logits = model.decode_step(memory, ys)
        step_logits.append(logits)
        next_tok = logits.argmax(-1, keepdim=True)
        ys = torch.cat([ys, next_tok], dim=1)
        if (next_tok == EOS).all():
            break
    return ys, step_logits


def sequence_confidence(step_logits):
    probs = [F.softmax(l, -1).max(-1).values for l in step_logits]
    return torch.stack(probs, 1).mean(1)


def validate(model, loader, device="cuda"):
    model.eval()
    confs = []
    n_exact = 0
    for src, tgt in loader:
        src, tgt = src.to(device), tgt.to(device)
        ys, logits = greedy_decode(model, src, max_len=tgt.size(1))
        confs.extend(sequence_confidence(logits).tolist())
        L = min(ys.size(1), tgt.size(1))
        n_exact += (ys[:, :L] == tgt[:, :L]).all(1).sum().item()
    print(f"exact match: {n_exact}, mean confidence: {sum(confs) / max(1, len(confs)):.3f}")
