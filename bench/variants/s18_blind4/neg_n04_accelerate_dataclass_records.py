"""Fine-tune a text classifier with accelerate; per-step records are kept for a
post-hoc report (loss curve, grad-norm spikes)."""
import argparse
import json
import math
from dataclasses import dataclass, asdict, field
from typing import List

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_scheduler
from datasets import load_dataset


@dataclass
class StepRecord:
    step: int
    loss: float
    lr: float
    grad_norm: float


@dataclass
class RunHistory:
    records: List[StepRecord] = field(default_factory=list)

    def push(self, step, loss, lr, grad_norm):
        self.records.append(StepRecord(step=step, loss=loss, lr=lr, grad_norm=grad_norm))

    def spikes(self, factor=3.0):
        vals = [r.loss for r in self.records]
        if len(vals) < 20:
            return []
        mean = sum(vals) / len(vals)
        return [r.step for r in self.records if r.loss > factor * mean]

    def dump(self, path):
        with open(path, "w") as fh:
            json.dump([asdict(r) for r in self.records], fh)


def build_loaders(tokenizer, batch_size):
    raw = load_dataset("glue", "sst2")

    def enc(ex):
        return tokenizer(ex["sentence"], truncation=True, padding="max_length", max_length=128)

    ds = raw.map(enc, batched=True).rename_column("label", "labels")
    ds.set_format("torch", columns=["input_ids", "attention_mask", "labels"])
    return (DataLoader(ds["train"], batch_size=batch_size, shuffle=True),
            DataLoader(ds["validation"], batch_size=batch_size))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="roberta-base")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--bs", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--history", default="history.json")
    args = p.parse_args()

    accelerator = Accelerator(gradient_accumulation_steps=2)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
    train_dl, eval_dl = build_loaders(tok, args.bs)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    total = args.epochs * math.ceil(len(train_dl) / 2)
    sched = get_scheduler("linear", opt, num_warmup_steps=int(0.06 * total), num_training_steps=total)
    model, opt, train_dl, eval_dl, sched = accelerator.prepare(model, opt, train_dl, eval_dl, sched)

    history = RunHistory()
    step = 0
    for epoch in range(args.epochs):
        model.train()
        for batch in train_dl:
            with accelerator.accumulate(model):
                out = model(**batch)
                accelerator.backward(out.loss)
                gn = accelerator.clip_grad_norm_(model.parameters(), 1.0) if accelerator.sync_gradients else 0.0
                opt.step()
                sched.step()
                opt.zero_grad()
            history.push(step, out.loss.item(), sched.get_last_lr()[0], float(gn))
            step += 1

        model.eval()
        correct = n = 0
        for batch in eval_dl:
            with torch.no_grad():
                logits = model(**batch).logits
            preds, labels = accelerator.gather_for_metrics((logits.argmax(-1), batch["labels"]))
            correct += (preds == labels).sum().item()
            n += labels.numel()
        accelerator.print(f"epoch {epoch}: acc={correct / n:.4f} spikes={history.spikes()[:5]}")

    if accelerator.is_main_process:
        history.dump(args.history)


if __name__ == "__main__":
    main()
