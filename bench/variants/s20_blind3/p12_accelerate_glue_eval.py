#!/usr/bin/env python
# Fine-tune / evaluate a sequence classifier on a GLUE task with Accelerate.
# Adapted from the `run_glue_no_trainer.py` example; evaluation additionally
# reports eval loss and writes the raw logits for later ensembling.
import argparse
import json
import logging
import math
import os

import datasets
import evaluate
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_scheduler,
)

logger = get_logger(__name__)

task_to_keys = {
    "cola": ("sentence", None), "mnli": ("premise", "hypothesis"), "mrpc": ("sentence1", "sentence2"),
    "qnli": ("question", "sentence"), "qqp": ("question1", "question2"), "rte": ("sentence1", "sentence2"),
    "sst2": ("sentence", None), "stsb": ("sentence1", "sentence2"), "wnli": ("sentence1", "sentence2"),
}


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task_name", default="mrpc", choices=list(task_to_keys))
    parser.add_argument("--model_name_or_path", default="roberta-base")
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--per_device_train_batch_size", type=int, default=32)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--warmup_ratio", type=float, default=0.06)
    parser.add_argument("--output_dir", default="out/glue")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def run_eval(model, dataloader, accelerator, metric):
    model.eval()
    logit_chunks, label_chunks = [], []
    for batch in dataloader:
        outputs = model(**batch)
        logits, refs = accelerator.gather_for_metrics((outputs.logits, batch["labels"]))
        logit_chunks.append(logits)  # leak
        label_chunks.append(refs)
    all_logits = torch.cat(logit_chunks)
    all_labels = torch.cat(label_chunks)
    if all_logits.size(-1) == 1:
        preds = all_logits.squeeze(-1)
        eval_loss = F.mse_loss(preds, all_labels.float()).item()
    else:
        preds = all_logits.argmax(dim=-1)
        eval_loss = F.cross_entropy(all_logits, all_labels).item()
    result = metric.compute(predictions=preds, references=all_labels)
    result["eval_loss"] = eval_loss
    return result, all_logits


def main():
    args = parse_args()
    accelerator = Accelerator()
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    if accelerator.is_local_main_process:
        datasets.utils.logging.set_verbosity_warning()
    set_seed(args.seed)

    raw = datasets.load_dataset("glue", args.task_name)
    is_regression = args.task_name == "stsb"
    num_labels = 1 if is_regression else raw["train"].features["label"].num_classes
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)

    k1, k2 = task_to_keys[args.task_name]

    def preprocess(examples):
        texts = (examples[k1],) if k2 is None else (examples[k1], examples[k2])
        out = tokenizer(*texts, max_length=args.max_length, truncation=True)
        out["labels"] = examples["label"]
        return out

    with accelerator.main_process_first():
        processed = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)
    eval_split = "validation_matched" if args.task_name == "mnli" else "validation"
    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8 if accelerator.mixed_precision != "no" else None)
    train_dl = DataLoader(processed["train"], shuffle=True, collate_fn=collator,
                          batch_size=args.per_device_train_batch_size)
    eval_dl = DataLoader(processed[eval_split], collate_fn=collator, batch_size=args.per_device_eval_batch_size)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01)
    steps = args.num_train_epochs * math.ceil(len(train_dl) / accelerator.gradient_accumulation_steps)
    scheduler = get_scheduler("linear", optimizer, num_warmup_steps=int(args.warmup_ratio * steps),
                              num_training_steps=steps)
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(
        model, optimizer, train_dl, eval_dl, scheduler)
    metric = evaluate.load("glue", args.task_name)

    progress = tqdm(range(steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dl:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            progress.update(1)
        result, logits = run_eval(model, eval_dl, accelerator, metric)
        logger.info(f"epoch {epoch}: {result}")

    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(logits.cpu(), os.path.join(args.output_dir, "eval_logits.pt"))
        with open(os.path.join(args.output_dir, "all_results.json"), "w") as f:
            json.dump({f"eval_{k}": v for k, v in result.items()}, f)
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process,
                              save_function=accelerator.save)


if __name__ == "__main__":
    main()
