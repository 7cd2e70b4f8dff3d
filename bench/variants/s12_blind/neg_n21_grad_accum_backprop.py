"""Gradient accumulation for a memory-constrained seq2seq fine-tune."""
import argparse

import torch
import torch.nn as nn


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--accum", type=int, default=8)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-5)
    return p.parse_args()


def train(model: nn.Module, loader, args: argparse.Namespace) -> None:
    model = model.cuda().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        loss_total = 0.0
        logged = 0.0
        for step, batch in enumerate(loader, start=1):
            out = model(
                input_ids=batch["input_ids"].cuda(),
                attention_mask=batch["attention_mask"].cuda(),
                labels=batch["labels"].cuda(),
            )
            loss_total = loss_total + out.loss / args.accum
            if step % args.accum == 0:
                loss_total.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                logged += loss_total.item()
                loss_total = 0.0
            if step % (50 * args.accum) == 0:
                print(f"epoch {epoch} step {step} loss {logged / 50:.4f}")
                logged = 0.0


if __name__ == "__main__":
    args = parse()
    # from transformers import AutoModelForSeq2SeqLM
    # train(AutoModelForSeq2SeqLM.from_pretrained("t5-small"), build_loader(), args)
