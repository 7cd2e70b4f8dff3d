#!/usr/bin/env python3
"""Recipe: CTC keyword spotting on synthetic filterbanks.

Follows the speechbrain ``Brain`` structure: the base class owns the
fit loop, the recipe subclass provides ``compute_forward`` and
``compute_objectives``.
"""
import argparse
import logging
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

logger = logging.getLogger(__name__)


class Stage:
    TRAIN = "train"
    VALID = "valid"


class Brain:
    def __init__(self, modules, opt_class, hparams, run_opts=None):
        self.modules = nn.ModuleDict(modules)
        self.hparams = argparse.Namespace(**hparams)
        self.run_opts = run_opts or {}
        self.optimizer = opt_class(self.modules.parameters())
        self.step = 0
        self.avg_train_loss = 0.0
        self.epoch_losses = {}

    # -- to be provided by recipes -------------------------------------------------
    def compute_forward(self, batch, stage):
        raise NotImplementedError

    def compute_objectives(self, predictions, batch, stage):
        raise NotImplementedError

    # -- template ----------------------------------------------------------------
    @staticmethod
    def update_average(loss, avg_loss, step):
        """Running mean of the training loss (numerically cheap)."""
        if torch.isfinite(loss):
            avg_loss -= avg_loss / step
            avg_loss += float(loss) / step
        return avg_loss

    def fit_batch(self, batch):
        outputs = self.compute_forward(batch, Stage.TRAIN)
        loss = self.compute_objectives(outputs, batch, Stage.TRAIN)
        loss.backward()
        if self.check_gradients(loss):
            self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach().cpu()

    def check_gradients(self, loss):
        if not torch.isfinite(loss):
            logger.warning("Non-finite loss encountered, skipping step")
            return False
        nn.utils.clip_grad_norm_(self.modules.parameters(), self.hparams.max_grad_norm)
        return True

    def on_stage_end(self, stage, stage_loss, epoch):
        self.epoch_losses.setdefault(stage, []).append(float(stage_loss))
        logger.info("epoch %d %s loss: %.4f", epoch, stage, float(stage_loss))

    def fit(self, epoch_counter, train_set, progressbar=True):
        for epoch in epoch_counter:
            self.modules.train()
            self.step = 0
            self.avg_train_loss = 0.0
            with tqdm(train_set, dynamic_ncols=True, disable=not progressbar) as t:
                for batch in t:
                    self.step += 1
                    loss = self.fit_batch(batch)
                    self.avg_train_loss = self.update_average(loss, self.avg_train_loss, self.step)
                    t.set_postfix(train_loss=self.avg_train_loss)
            self.on_stage_end(Stage.TRAIN, self.avg_train_loss, epoch)


class KWSBrain(Brain):
    def compute_forward(self, batch, stage):
        feats, feat_lens = batch["feats"], batch["feat_lens"]
        feats = self.modules.normalize(feats)
        x, _ = self.modules.encoder(feats)
        logits = self.modules.ctc_lin(x)
        return logits.log_softmax(-1), feat_lens

    def compute_objectives(self, predictions, batch, stage):
        log_probs, feat_lens = predictions
        tokens, token_lens = batch["tokens"], batch["token_lens"]
        return self.hparams.ctc_cost(
            log_probs.transpose(0, 1), tokens, feat_lens, token_lens
        )


class SyntheticKWS(Dataset):
    def __init__(self, n=1024, frames=80, n_mels=40, vocab=12, max_tok=6):
        self.n, self.frames, self.n_mels = n, frames, n_mels
        self.vocab, self.max_tok = vocab, max_tok

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        ntok = int(torch.randint(1, self.max_tok + 1, (1,), generator=g))
        return {
            "feats": torch.randn(self.frames, self.n_mels, generator=g),
            "feat_lens": self.frames,
            "tokens": torch.randint(1, self.vocab, (self.max_tok,), generator=g),
            "token_lens": ntok,
        }


def collate(items):
    return {
        "feats": torch.stack([it["feats"] for it in items]),
        "feat_lens": torch.tensor([it["feat_lens"] for it in items]),
        "tokens": torch.stack([it["tokens"] for it in items]),
        "token_lens": torch.tensor([it["token_lens"] for it in items]),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args(sys.argv[1:])
    logging.basicConfig(level=logging.INFO)

    vocab = 12
    modules = {
        "normalize": nn.LayerNorm(40),
        "encoder": nn.LSTM(40, 128, num_layers=2, batch_first=True, bidirectional=True),
        "ctc_lin": nn.Linear(256, vocab),
    }
    hparams = {"max_grad_norm": 5.0, "ctc_cost": nn.CTCLoss(blank=0, zero_infinity=True)}
    brain = KWSBrain(modules, lambda p: torch.optim.Adam(p, lr=args.lr), hparams)
    loader = DataLoader(SyntheticKWS(), batch_size=16, shuffle=True, collate_fn=collate)
    brain.fit(range(1, args.epochs + 1), loader)
