"""Joint intent-classification + slot-filling fine-tuning on top of HF Trainer.

The Trainer only reports the total loss, so we keep the per-head components
ourselves and report their averages together with the eval metrics.
"""
import logging
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np
import torch
import torch.nn.functional as F
from transformers import (
    AutoConfig,
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
    set_seed,
)

from nlu.data import build_nlu_datasets, NLUCollator
from nlu.modeling import JointBertForNLU

logger = logging.getLogger(__name__)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="bert-base-cased")
    intent_weight: float = field(default=1.0)
    slot_weight: float = field(default=2.0)
    label_smoothing: float = field(default=0.0)


@dataclass
class DataArguments:
    dataset_dir: str = field(default="data/atis")
    max_seq_length: int = field(default=64)


class JointNLUTrainer(Trainer):
    def __init__(self, *args, head_weights: Optional[Dict[str, float]] = None,
                 label_smoothing: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_weights = head_weights or {"intent": 1.0, "slot": 1.0}
        self.label_smoothing = label_smoothing
        self._head_loss_sums = defaultdict(float)
        self._head_loss_steps = 0

    def _head_losses(self, outputs, intent_labels, slot_labels):
        intent_loss = F.cross_entropy(outputs.intent_logits, intent_labels,
                                      label_smoothing=self.label_smoothing)
        slot_logits = outputs.slot_logits
        slot_loss = F.cross_entropy(slot_logits.view(-1, slot_logits.size(-1)),
                                    slot_labels.view(-1), ignore_index=-100)
        return {"intent": intent_loss, "slot": slot_loss}

    def _track_heads(self, head_losses):
        for name, value in head_losses.items():
            self._head_loss_sums[name] += value  # leak
        self._head_loss_steps += 1

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        intent_labels = inputs.pop("intent_labels")
        slot_labels = inputs.pop("slot_labels")
        outputs = model(**inputs)
        head_losses = self._head_losses(outputs, intent_labels, slot_labels)
        loss = sum(self.head_weights[k] * v for k, v in head_losses.items())
        if model.training:
            self._track_heads(head_losses)
        return (loss, outputs) if return_outputs else loss

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        if self._head_loss_steps:
            train_heads = {
                f"train_{k}_loss": round(float(v) / self._head_loss_steps, 4)
                for k, v in self._head_loss_sums.items()
            }
            self.log(train_heads)
            metrics.update(train_heads)
            self._head_loss_sums.clear()
            self._head_loss_steps = 0
        return metrics


def compute_metrics(eval_pred):
    (intent_logits, slot_logits), (intent_labels, slot_labels) = eval_pred
    intent_acc = (intent_logits.argmax(-1) == intent_labels).mean()
    mask = slot_labels != -100
    slot_acc = (slot_logits.argmax(-1)[mask] == slot_labels[mask]).mean()
    return {"intent_acc": float(intent_acc), "slot_token_acc": float(slot_acc)}


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(os.path.abspath(sys.argv[1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    training_args.label_names = ["intent_labels", "slot_labels"]

    logging.basicConfig(level=logging.INFO if training_args.should_log else logging.WARN)
    set_seed(training_args.seed)

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    train_ds, eval_ds, label_maps = build_nlu_datasets(data_args.dataset_dir, tokenizer,
                                                       data_args.max_seq_length)
    config = AutoConfig.from_pretrained(model_args.model_name_or_path,
                                        num_intents=len(label_maps["intent"]),
                                        num_slots=len(label_maps["slot"]))
    model = JointBertForNLU.from_pretrained(model_args.model_name_or_path, config=config)

    trainer = JointNLUTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        tokenizer=tokenizer,
        data_collator=NLUCollator(tokenizer),
        compute_metrics=compute_metrics,
        head_weights={"intent": model_args.intent_weight, "slot": model_args.slot_weight},
        label_smoothing=model_args.label_smoothing,
    )
    if training_args.do_train:
        result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
        trainer.save_model()
        trainer.log_metrics("train", result.metrics)
    if training_args.do_eval:
        metrics = trainer.evaluate()
        trainer.log_metrics("eval", metrics)
        trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
