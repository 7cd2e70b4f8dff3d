"""Fine-tune a sentence classifier on a GLUE-style task.

    python -m sentcls.train --model roberta-base --task sst2
"""
from __future__ import annotations

import argparse
import logging

import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, Trainer, TrainingArguments, set_seed)

import sentcls.callbacks as cbs

logger = logging.getLogger("sentcls")

TASK_KEYS = {"sst2": ("sentence", None), "mrpc": ("sentence1", "sentence2"),
             "qnli": ("question", "sentence"), "rte": ("sentence1", "sentence2")}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="roberta-base")
    p.add_argument("--task", choices=sorted(TASK_KEYS), default="sst2")
    p.add_argument("--out", default="runs/sentcls")
    p.add_argument("--epochs", type=float, default=3)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def accuracy(pred):
    logits, labels = pred
    return {"accuracy": float((np.argmax(logits, -1) == labels).mean())}


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)
    raw = load_dataset("glue", args.task)
    k1, k2 = TASK_KEYS[args.task]
    tok = AutoTokenizer.from_pretrained(args.model)

    def encode(batch):
        texts = (batch[k1],) if k2 is None else (batch[k1], batch[k2])
        return tok(*texts, truncation=True, max_length=args.max_length)

    enc = raw.map(encode, batched=True)
    num_labels = raw["train"].features["label"].num_classes
    model = AutoModelForSequenceClassification.from_pretrained(args.model,
                                                               num_labels=num_labels)
    targs = TrainingArguments(
        output_dir=args.out, num_train_epochs=args.epochs, learning_rate=args.lr,
        per_device_train_batch_size=args.batch_size, per_device_eval_batch_size=128,
        warmup_ratio=0.06, weight_decay=0.1, logging_steps=50, eval_strategy="epoch",
        save_strategy="epoch", load_best_model_at_end=True, metric_for_best_model="accuracy",
        fp16=True, max_grad_norm=1.0, report_to="none",
    )
    trainer = Trainer(
        model=model, args=targs, train_dataset=enc["train"], eval_dataset=enc["validation"],
        data_collator=DataCollatorWithPadding(tok), compute_metrics=accuracy,
        callbacks=[cbs.GradNormCallback(window=targs.logging_steps),
                   cbs.JsonlMetricsCallback()],
    )
    trainer.train()
    logger.info("final eval: %s", trainer.evaluate())
    trainer.save_model(args.out)


if __name__ == "__main__":
    main()
