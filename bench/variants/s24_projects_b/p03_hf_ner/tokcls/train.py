"""Fine-tune an encoder for NER.

    python -m tokcls.train --model xlm-roberta-base --dataset conll2003 --out runs/xlmr
"""
from __future__ import annotations

import argparse
import logging
from functools import partial

from transformers import (AutoModelForTokenClassification, AutoTokenizer,
                          DataCollatorForTokenClassification, EarlyStoppingCallback,
                          Trainer, TrainingArguments, set_seed)

from tokcls import callbacks
from tokcls import data as ner_data

logger = logging.getLogger("tokcls")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="xlm-roberta-base")
    p.add_argument("--dataset", default="conll2003")
    p.add_argument("--config", default=None)
    p.add_argument("--out", default="runs/ner")
    p.add_argument("--epochs", type=float, default=5)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--warmup-ratio", type=float, default=0.06)
    p.add_argument("--label-all-tokens", action="store_true")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--bf16", action="store_true")
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    set_seed(args.seed)

    ds = ner_data.load_ner(args.dataset, args.config)
    names = ner_data.label_names(ds)
    tokenizer = AutoTokenizer.from_pretrained(args.model, add_prefix_space=True)
    encode = partial(ner_data.tokenize_and_align, tokenizer=tokenizer,
                     label_all_tokens=args.label_all_tokens, max_length=args.max_length)
    tokenized = ds.map(encode, batched=True, remove_columns=ds["train"].column_names)

    model = AutoModelForTokenClassification.from_pretrained(
        args.model, num_labels=len(names),
        id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})

    training_args = TrainingArguments(
        output_dir=args.out, num_train_epochs=args.epochs, learning_rate=args.lr,
        per_device_train_batch_size=args.batch_size, per_device_eval_batch_size=64,
        warmup_ratio=args.warmup_ratio, weight_decay=0.01, bf16=args.bf16,
        eval_strategy="steps", eval_steps=500, save_steps=500, logging_steps=25,
        load_best_model_at_end=True, metric_for_best_model="f1", save_total_limit=2,
        dataloader_num_workers=2, report_to="none",
    )
    trainer = Trainer(
        model=model, args=training_args,
        train_dataset=tokenized["train"], eval_dataset=tokenized["validation"],
        data_collator=DataCollatorForTokenClassification(tokenizer),
        compute_metrics=ner_data.build_compute_metrics(names),
        callbacks=[callbacks.GradNormCallback(), callbacks.LossSpikeCallback(factor=4.0),
                   EarlyStoppingCallback(early_stopping_patience=5)],
    )
    trainer.train()
    metrics = trainer.evaluate(tokenized["test"], metric_key_prefix="test")
    logger.info("test metrics: %s", metrics)
    trainer.save_model(args.out)
    tokenizer.save_pretrained(args.out)


if __name__ == "__main__":
    main()
