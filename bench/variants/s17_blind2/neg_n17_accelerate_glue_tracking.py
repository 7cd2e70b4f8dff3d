"""GLUE fine-tuning with accelerate (no Trainer), with optional experiment tracking."""
import argparse
import math

import evaluate
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from transformers import AutoModelForSequenceClassification, get_scheduler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="bert-base-cased")
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--with_tracking", action="store_true")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def training_function(args, train_dataloader, eval_dataloader, num_labels=2):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              log_with="tensorboard" if args.with_tracking else None, project_dir="logs")
    set_seed(args.seed)
    metric = evaluate.load("glue", "mrpc")
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    steps = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps) * args.num_train_epochs
    lr_scheduler = get_scheduler("linear", optimizer, num_warmup_steps=100, num_training_steps=steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )
    if args.with_tracking:
        accelerator.init_trackers("glue_no_trainer", vars(args))

    for epoch in range(args.num_train_epochs):
        model.train()
        if args.with_tracking:
            total_loss = 0
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if args.with_tracking:
                total_loss += loss.detach().float()

        model.eval()
        for step, batch in enumerate(eval_dataloader):
            with torch.no_grad():
                outputs = model(**batch)
            predictions = outputs.logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            metric.add_batch(predictions=predictions, references=references)
        eval_metric = metric.compute()
        accelerator.print(f"epoch {epoch}:", eval_metric)
        if args.with_tracking:
            accelerator.log(
                {"accuracy": eval_metric["accuracy"], "f1": eval_metric["f1"],
                 "train_loss": total_loss.item() / len(train_dataloader), "epoch": epoch},
                step=epoch,
            )
    accelerator.end_training()
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out", save_function=accelerator.save)
