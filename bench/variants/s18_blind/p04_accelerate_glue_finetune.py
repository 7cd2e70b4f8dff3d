#!/usr/bin/env python
"""Fine-tune a sequence classifier on a GLUE task with 🤗 Accelerate (no Trainer)."""
import argparse
import logging
import math
import os

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_scheduler,
)
import evaluate

logger = logging.getLogger(__name__)

TASK_KEYS = {
    "cola": ("sentence", None),
    "mrpc": ("sentence1", "sentence2"),
    "qnli": ("question", "sentence"),
    "rte": ("sentence1", "sentence2"),
    "sst2": ("sentence", None),
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--task_name", default="mrpc", choices=list(TASK_KEYS))
    p.add_argument("--model_name_or_path", default="bert-base-cased")
    p.add_argument("--per_device_train_batch_size", type=int, default=32)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--num_warmup_steps", type=int, default=0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--output_dir", default="out")
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    logging.basicConfig(level=logging.INFO if accelerator.is_main_process else logging.WARN)
    set_seed(args.seed)

    raw = load_dataset("glue", args.task_name)
    num_labels = len(raw["train"].features["label"].names)
    tok = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)

    k1, k2 = TASK_KEYS[args.task_name]

    def preprocess(examples):
        texts = (examples[k1],) if k2 is None else (examples[k1], examples[k2])
        out = tok(*texts, truncation=True, max_length=128)
        out["labels"] = examples["label"]
        return out

    with accelerator.main_process_first():
        processed = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)

    collator = DataCollatorWithPadding(tok, pad_to_multiple_of=8 if accelerator.mixed_precision != "no" else None)
    train_dl = DataLoader(processed["train"], shuffle=True, collate_fn=collator, batch_size=args.per_device_train_batch_size)
    eval_dl = DataLoader(processed["validation"], collate_fn=collator, batch_size=64)

    no_decay = ["bias", "LayerNorm.weight"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.learning_rate)
    steps_per_epoch = math.ceil(len(train_dl) / args.gradient_accumulation_steps)
    max_steps = args.num_train_epochs * steps_per_epoch
    lr_scheduler = get_scheduler("linear", optimizer, num_warmup_steps=args.num_warmup_steps, num_training_steps=max_steps)

    model, optimizer, train_dl, eval_dl, lr_scheduler = accelerator.prepare(model, optimizer, train_dl, eval_dl, lr_scheduler)
    metric = evaluate.load("glue", args.task_name)
    progress = tqdm(range(max_steps), disable=not accelerator.is_local_main_process)

    for epoch in range(args.num_train_epochs):
        model.train()
        total_loss = 0
        for step, batch in enumerate(train_dl):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                total_loss += loss  # leak
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress.update(1)

        model.eval()
        for batch in eval_dl:
            with torch.no_grad():
                outputs = model(**batch)
            preds = outputs.logits.argmax(dim=-1)
            preds, refs = accelerator.gather_for_metrics((preds, batch["labels"]))
            metric.add_batch(predictions=preds, references=refs)
        result = metric.compute()
        logger.info("epoch %d: %s train_loss=%.4f", epoch, result, total_loss.item() / len(train_dl))

    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save)
    if accelerator.is_main_process:
        tok.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
