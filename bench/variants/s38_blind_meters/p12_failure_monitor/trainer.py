import argparse
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from monitor import TrainingMonitor

logging.basicConfig(format="%(asctime)s | %(levelname)s | %(message)s", level=logging.INFO)
logger = logging.getLogger("train")


class TransformerClassifier(nn.Module):
    def __init__(self, vocab, dim=512, heads=8, layers=6, num_classes=2, max_len=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens):
        pad = tokens.eq(0)
        x = self.embed(tokens) + self.pos[:, : tokens.size(1)]
        x = self.encoder(x, src_key_padding_mask=pad)
        x = x.masked_fill(pad.unsqueeze(-1), 0).sum(1) / (~pad).sum(1, keepdim=True).clamp(min=1)
        return self.head(x)


class Trainer(object):
    def __init__(self, args, model):
        self.args = args
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
        self.monitor = TrainingMonitor()
        self.num_updates = 0

    def train_step(self, sample):
        self.model.train()
        tokens, target = (t.to(self.device) for t in sample)
        net_output = self.model(tokens)
        loss = F.cross_entropy(net_output, target, label_smoothing=0.1)
        if not torch.isfinite(loss):
            raise FloatingPointError("non-finite loss at update %d" % self.num_updates)
        self.optimizer.zero_grad()
        loss.backward()
        grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)
        if not math.isfinite(grad_norm):
            raise FloatingPointError("gradient norm is %s" % grad_norm)
        self.optimizer.step()
        self.num_updates += 1
        return {"loss": loss.item(), "gnorm": float(grad_norm), "ntokens": int(tokens.ne(0).sum())}

    def train_epoch(self, loader, epoch):
        for i, sample in enumerate(loader):
            try:
                stats = self.train_step(sample)
            except (FloatingPointError, RuntimeError) as e:
                if isinstance(e, RuntimeError) and "out of memory" not in str(e):
                    raise
                self.optimizer.zero_grad(set_to_none=True)
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                self.monitor.on_failure(self.num_updates, e)
                continue
            self.monitor.on_success(self.num_updates, stats)
            if i % self.args.log_interval == 0:
                logger.info("epoch %03d | step %05d | loss %.3f | gnorm %.2f | wps %.0f", epoch, i,
                            stats["loss"], stats["gnorm"], self.monitor.words_per_second())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-epoch", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--clip-norm", type=float, default=1.0)
    parser.add_argument("--log-interval", type=int, default=100)
    args = parser.parse_args()

    lengths = torch.randint(16, 512, (20000,))
    tokens = torch.randint(1, 32000, (20000, 512))
    tokens[torch.arange(512).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    loader = DataLoader(TensorDataset(tokens, torch.randint(0, 2, (20000,))),
                        batch_size=args.batch_size, shuffle=True)

    trainer = Trainer(args, TransformerClassifier(32000))
    for epoch in range(1, args.max_epoch + 1):
        trainer.train_epoch(loader, epoch)
        logger.info("end of epoch %d: %s", epoch, trainer.monitor.summary())


if __name__ == "__main__":
    main()
