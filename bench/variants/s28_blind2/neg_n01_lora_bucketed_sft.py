"""Supervised fine-tuning of causal LMs with LoRA adapters.

On top of the stock HF ``Trainer`` this reports the training loss split by
sequence-length bucket, so we can see whether long-context samples lag behind.
"""
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Trainer

logger = logging.getLogger(__name__)


@dataclass
class LoraSFTConfig:
    base_model: str = "meta-llama/Llama-2-7b-hf"
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: List[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"]
    )
    length_buckets: List[int] = field(default_factory=lambda: [256, 512, 1024, 2048])


def build_lora_model(cfg: LoraSFTConfig):
    model = AutoModelForCausalLM.from_pretrained(cfg.base_model, torch_dtype=torch.bfloat16)
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    peft_cfg = LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=cfg.target_modules,
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, peft_cfg)
    model.print_trainable_parameters()
    return model


class BucketedLossTrainer(Trainer):
    """Trainer that additionally logs the loss per sequence-length bucket."""

    def __init__(self, *args, length_buckets=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.length_buckets = sorted(length_buckets or [512, 1024, 2048])
        self._bucket_losses: Dict[str, List[float]] = defaultdict(list)

    def _bucket_name(self, n_tokens: int) -> str:
        for edge in self.length_buckets:
            if n_tokens <= edge:
                return f"len<={edge}"
        return f"len>{self.length_buckets[-1]}"

    @staticmethod
    def _per_sequence_loss(logits, labels):
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        token_loss = F.cross_entropy(
            shift_logits.view(-1, shift_logits.size(-1)).float(),
            shift_labels.view(-1),
            ignore_index=-100,
            reduction="none",
        ).view(shift_labels.shape)
        mask = (shift_labels != -100).float()
        n_tokens = mask.sum(-1)
        return (token_loss * mask).sum(-1) / n_tokens.clamp(min=1.0), n_tokens

    def _record_buckets(self, seq_loss, seq_len):
        for loss_i, len_i in zip(seq_loss.detach().float().tolist(), seq_len.tolist()):
            bucket = self._bucket_name(int(len_i))
            self._bucket_losses[bucket].append(loss_i)

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        if model.training and "labels" in inputs:
            with torch.no_grad():
                seq_loss, seq_len = self._per_sequence_loss(outputs.logits, inputs["labels"])
            self._record_buckets(seq_loss, seq_len)
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: Dict[str, float], *args, **kwargs) -> None:
        for name, values in self._bucket_losses.items():
            if values:
                logs[f"loss/{name}"] = round(sum(values) / len(values), 4)
            values.clear()
        super().log(logs, *args, **kwargs)


def train(cfg: LoraSFTConfig, training_args, train_dataset, eval_dataset, collator):
    model = build_lora_model(cfg)
    trainer = BucketedLossTrainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=collator,
        length_buckets=cfg.length_buckets,
    )
    logger.info("Starting LoRA SFT on %d examples", len(train_dataset))
    trainer.train()
    trainer.save_model(training_args.output_dir)
    return trainer
