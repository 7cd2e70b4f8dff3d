"""Trainer subclass that adds a load-balancing auxiliary loss for MoE models.

The router of each MoE block exposes ``aux_loss`` after the forward pass; we
add it (scaled) to the LM loss and report its mean since the previous log
call next to the usual ``loss`` entry in the Trainer logs.
"""
import logging
import os
from dataclasses import dataclass, field
from typing import Dict, Optional

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)
from datasets import load_dataset

logger = logging.getLogger(__name__)


@dataclass
class MoEArguments:
    model_name_or_path: str = field(default="mistralai/Mixtral-8x7B-v0.1")
    dataset_name: str = field(default="wikitext")
    dataset_config: str = field(default="wikitext-103-raw-v1")
    aux_loss_coef: float = field(default=0.01)
    block_size: int = field(default=1024)


def collect_router_losses(model) -> Optional[torch.Tensor]:
    losses = []
    for module in model.modules():
        aux = getattr(module, "aux_loss", None)
        if aux is not None:
            losses.append(aux)
    if not losses:
        return None
    return torch.stack(losses).mean()


class MoETrainer(Trainer):
    def __init__(self, *args, aux_loss_coef: float = 0.01, **kwargs):
        super().__init__(*args, **kwargs)
        self.aux_loss_coef = aux_loss_coef
        self._aux_sum = 0.0
        self._aux_steps = 0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        lm_loss = outputs.loss
        aux = collect_router_losses(self.accelerator.unwrap_model(model))
        if aux is not None:
            self._aux_sum += aux.detach().float().item()
            self._aux_steps += 1
            loss = lm_loss + self.aux_loss_coef * aux
        else:
            loss = lm_loss
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: Dict[str, float], *args, **kwargs) -> None:
        if self._aux_steps and "loss" in logs:
            logs["router_aux_loss"] = round(self._aux_sum / self._aux_steps, 6)
            self._aux_sum = 0.0
            self._aux_steps = 0
        super().log(logs, *args, **kwargs)


def group_texts(examples, block_size):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = len(concatenated[list(examples.keys())[0]])
    total_length = (total_length // block_size) * block_size
    return {
        k: [t[i : i + block_size] for i in range(0, total_length, block_size)]
        for k, t in concatenated.items()
    }


def main():
    parser = HfArgumentParser((MoEArguments, TrainingArguments))
    moe_args, training_args = parser.parse_args_into_dataclasses()
    logging.basicConfig(level=logging.INFO)

    tokenizer = AutoTokenizer.from_pretrained(moe_args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(moe_args.model_name_or_path, torch_dtype=torch.bfloat16)

    raw = load_dataset(moe_args.dataset_name, moe_args.dataset_config)
    tokenized = raw.map(lambda ex: tokenizer(ex["text"]), batched=True, remove_columns=["text"])
    lm_ds = tokenized.map(lambda ex: group_texts(ex, moe_args.block_size), batched=True)

    trainer = MoETrainer(
        model=model,
        args=training_args,
        train_dataset=lm_ds["train"],
        eval_dataset=lm_ds["validation"],
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        aux_loss_coef=moe_args.aux_loss_coef,
    )
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    trainer.save_model(os.path.join(training_args.output_dir, "final"))


if __name__ == "__main__":
    main()
