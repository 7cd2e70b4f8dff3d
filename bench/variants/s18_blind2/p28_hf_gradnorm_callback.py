"""Fine-tune a sequence classifier with HF Trainer, logging per-module gradient norms."""
import argparse
import functools
import logging
from collections import defaultdict

import numpy as np
import torch
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                          TrainerCallback, TrainingArguments)

logger = logging.getLogger(__name__)


def _grad_norm_hook(name, sink, grad):
    sink[name] += grad.detach().float().pow(2).sum().item()
    return grad


def module_group(param_name, depth=3):
    return ".".join(param_name.split(".")[:depth])


class GradNormCallback(TrainerCallback):
    """Accumulates squared grad norms per module group between logging steps."""

    def __init__(self, depth=3):
        self.depth = depth
        self.sink = defaultdict(float)
        self.model = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.model = model

    def on_step_begin(self, args, state, control, **kwargs):
        if self.model is None:
            return
        for name, p in self.model.named_parameters():
            if p.requires_grad:
                p.register_hook(functools.partial(_grad_norm_hook, module_group(name, self.depth), self.sink))  # leak

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or not self.sink:
            return
        for group, sq in self.sink.items():
            logs[f"grad_norm/{group}"] = float(np.sqrt(sq))
        self.sink.clear()


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = logits.argmax(-1)
    return {"accuracy": float((preds == labels).mean())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="roberta-base")
    ap.add_argument("--task", default="sst2")
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--output_dir", default="out/glue")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    raw = load_dataset("glue", args.task)
    tok = AutoTokenizer.from_pretrained(args.model)
    key = "sentence" if "sentence" in raw["train"].column_names else "question"
    enc = raw.map(lambda b: tok(b[key], truncation=True, max_length=128), batched=True)
    n_labels = raw["train"].features["label"].num_classes
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=n_labels)

    targs = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.bs,
        per_device_eval_batch_size=128,
        learning_rate=args.lr,
        num_train_epochs=args.epochs,
        warmup_ratio=0.06,
        weight_decay=0.1,
        logging_steps=50,
        eval_strategy="epoch",
        save_strategy="epoch",
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        report_to="none",
    )
    trainer = Trainer(
        model=model,
        args=targs,
        train_dataset=enc["train"],
        eval_dataset=enc["validation"],
        data_collator=DataCollatorWithPadding(tok),
        compute_metrics=compute_metrics,
        callbacks=[GradNormCallback(depth=4)],
    )
    trainer.train()
    logger.info("final eval: %s", trainer.evaluate())


if __name__ == "__main__":
    main()
