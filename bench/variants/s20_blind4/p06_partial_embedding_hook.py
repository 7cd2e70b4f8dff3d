"""Fine-tune only the embeddings of newly added tokens (prompt / domain tokens).

The pretrained rows of the embedding matrix stay frozen by zeroing their
gradient; only rows >= ``num_base_tokens`` that actually occur in the batch
receive updates.
"""
import argparse
import logging

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


class NewTokenEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, num_base_tokens, **kwargs):
        super().__init__(num_embeddings, embedding_dim, **kwargs)
        self.num_base_tokens = num_base_tokens

    def forward(self, input_ids):
        if self.training and self.weight.requires_grad:
            rows = torch.zeros(self.num_embeddings, 1, device=self.weight.device, dtype=self.weight.dtype)
            seen = input_ids[input_ids >= self.num_base_tokens].unique()
            rows[seen] = 1.0
            self.weight.register_hook(lambda grad: grad * rows)  # leak
        return super().forward(input_ids)


class TinyLM(nn.Module):
    def __init__(self, vocab, num_base, dim=256, layers=2):
        super().__init__()
        self.embed = NewTokenEmbedding(vocab, dim, num_base)
        enc_layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True)
        self.body = nn.TransformerEncoder(enc_layer, layers)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        for p in self.body.parameters():
            p.requires_grad_(False)
        self.lm_head.requires_grad_(False)

    def forward(self, ids):
        return self.lm_head(self.body(self.embed(ids)))


class NewTokenTuner(pl.LightningModule):
    def __init__(self, vocab_size=32100, num_base_tokens=32000, lr=5e-3):
        super().__init__()
        self.save_hyperparameters()
        self.lm = TinyLM(vocab_size, num_base_tokens)

    def training_step(self, batch, batch_idx):
        ids, = batch
        logits = self.lm(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        ids, = batch
        logits = self.lm(ids[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
        self.log("val/loss", loss, sync_dist=True)

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        return torch.optim.Adam(params, lr=self.hparams.lr)


def make_loader(n, vocab, base, seq=128, shuffle=True):
    ids = torch.randint(0, base, (n, seq))
    # sprinkle the new tokens in
    mask = torch.rand(n, seq) < 0.05
    ids[mask] = torch.randint(base, vocab, (int(mask.sum()),))
    return DataLoader(TensorDataset(ids), batch_size=16, shuffle=shuffle)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--lr", type=float, default=5e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    module = NewTokenTuner(lr=args.lr)
    trainer = pl.Trainer(max_steps=args.max_steps, log_every_n_steps=50, val_check_interval=1000)
    trainer.fit(
        module,
        make_loader(20000, 32100, 32000),
        make_loader(512, 32100, 32000, shuffle=False),
    )


if __name__ == "__main__":
    main()
