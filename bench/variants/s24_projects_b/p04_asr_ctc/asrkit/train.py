"""Train the CTC model from NeMo-style manifests."""
from __future__ import annotations

import argparse
import logging
import os

import torch
from torch.utils.data import DataLoader

from asrkit.data import CharTokenizer, ManifestDataset, collate_batch
from asrkit.model import CTCModel

logger = logging.getLogger("asrkit")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train-manifest", required=True)
    p.add_argument("--val-manifest", required=True)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--num-workers", type=int, default=8)
    p.add_argument("--grad-clip", type=float, default=5.0)
    p.add_argument("--save-dir", default="checkpoints")
    return p.parse_args()


def greedy_wer(log_probs, lengths, targets, target_lens, tok):
    errs = words = 0
    for lp, n, tgt, m in zip(log_probs.argmax(-1), lengths, targets, target_lens):
        hyp = tok.decode(lp[:n].tolist()).split()
        ref = tok.decode(tgt[:m].tolist()).split()
        errs += sum(a != b for a, b in zip(hyp, ref)) + abs(len(hyp) - len(ref))
        words += len(ref)
    return errs, words


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tok = CharTokenizer()
    train_ds = ManifestDataset(args.train_manifest, tok, train=True)
    val_ds = ManifestDataset(args.val_manifest, tok, train=False)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                          num_workers=args.num_workers, collate_fn=collate_batch,
                          pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size, num_workers=args.num_workers,
                        collate_fn=collate_batch)

    model = CTCModel(n_mels=80, vocab_size=len(tok)).to(device)
    ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    os.makedirs(args.save_dir, exist_ok=True)

    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for step, (feats, feat_lens, targets, target_lens) in enumerate(train_dl):
            feats, targets = feats.to(device), targets.to(device)
            log_probs, out_lens = model(feats, feat_lens.to(device))
            loss = ctc(log_probs.transpose(0, 1), targets, out_lens, target_lens)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            opt.step()
            running += loss.item()
            if step % 100 == 99:
                logger.info("epoch %d step %d ctc %.3f", epoch, step + 1, running / 100)
                running = 0.0

        model.eval()
        errs = words = 0
        with torch.no_grad():
            for feats, feat_lens, targets, target_lens in val_dl:
                log_probs, out_lens = model(feats.to(device), feat_lens.to(device))
                e, w = greedy_wer(log_probs.cpu(), out_lens.cpu(), targets, target_lens, tok)
                errs, words = errs + e, words + w
        logger.info("epoch %d val WER %.2f%%", epoch, 100.0 * errs / max(words, 1))
        torch.save(model.state_dict(), os.path.join(args.save_dir, f"ctc_{epoch:03d}.pt"))


if __name__ == "__main__":
    main()
