"""Train a CTC acoustic model.

    python -m asrkit.train --root /data/librispeech --epochs 30
"""
import argparse
import logging

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

import asrkit.meters as M
from asrkit.data import LibriSpeechCTC, collate, decode
from asrkit.model import CTCModel, greedy_decode

logger = logging.getLogger("asrkit")


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--print-freq", type=int, default=50)
    return ap.parse_args()


def train_one_epoch(model, loader, criterion, optimizer, scheduler, epoch, args, device):
    batch_time = M.AverageMeter("Time", ":6.3f")
    losses = M.AverageMeter("Loss", ":.4e")
    progress = M.ProgressMeter(len(loader), [batch_time, losses], prefix=f"Epoch: [{epoch}]")
    model.train()
    for i, (feats, feat_lens, targets, tgt_lens) in enumerate(loader):
        with M.Timer(batch_time):
            feats, feat_lens = feats.to(device), feat_lens.to(device)
            log_probs, out_lens = model(feats, feat_lens)
            loss = criterion(log_probs.transpose(0, 1), targets, out_lens, tgt_lens)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            scheduler.step()
            losses.update(loss, feats.size(0))
        if i % args.print_freq == 0:
            logger.info(progress.display(i))
    return losses.avg


@torch.no_grad()
def evaluate(model, loader, device, n_examples=3):
    model.eval()
    for feats, feat_lens, targets, tgt_lens in loader:
        log_probs, out_lens = model(feats.to(device), feat_lens.to(device))
        hyps = greedy_decode(log_probs, out_lens)
        for h in hyps[:n_examples]:
            logger.info("hyp: %s", decode(h))
        break


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = LibriSpeechCTC(args.root, "train-clean-100")
    dev_ds = LibriSpeechCTC(args.root, "dev-clean")
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, collate_fn=collate)
    dev_loader = DataLoader(dev_ds, batch_size=8, collate_fn=collate)

    model = CTCModel().to(device)
    criterion = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(train_loader))

    for epoch in range(args.epochs):
        avg = train_one_epoch(model, train_loader, criterion, optimizer, scheduler,
                              epoch, args, device)
        logger.info("epoch %d train loss %.4f", epoch, avg)
        evaluate(model, dev_loader, device)
        torch.save(model.state_dict(), f"ctc_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
