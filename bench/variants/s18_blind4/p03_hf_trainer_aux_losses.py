"""Trainer subclass that adds a z-loss / load-balancing term for an MoE LM and
reports each component separately."""
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
from transformers import (AutoModelForCausalLM, AutoTokenizer, HfArgumentParser,
                          Trainer, TrainingArguments, DataCollatorForLanguageModeling)
from datasets import load_dataset


@dataclass
class AuxArguments:
    model_name: str = field(default="mistralai/Mixtral-8x7B-v0.1")
    router_aux_coef: float = field(default=0.01)
    z_loss_coef: float = field(default=1e-3)
    max_length: int = field(default=1024)


class ComponentLogs:
    """Keeps per-component values between two `log` calls of the Trainer."""

    def __init__(self):
        self.values: Dict[str, List] = defaultdict(list)

    def add(self, name, value):
        self.values[name].append(value)  # leak

    def summarize(self) -> Dict[str, float]:
        out = {}
        for name, vals in self.values.items():
            if vals:
                out[name] = float(torch.stack(vals).mean())
        return out


class MoETrainer(Trainer):
    def __init__(self, *args, aux_args: Optional[AuxArguments] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.aux_args = aux_args or AuxArguments()
        self.component_logs = ComponentLogs()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs, output_router_logits=True)
        lm_loss = outputs.loss
        aux = outputs.aux_loss if outputs.aux_loss is not None else lm_loss.new_zeros(())
        z = torch.stack([torch.logsumexp(r, dim=-1).pow(2).mean()
                         for r in outputs.router_logits]).mean()
        loss = lm_loss + self.aux_args.router_aux_coef * aux + self.aux_args.z_loss_coef * z

        if model.training:
            self.component_logs.add("lm_loss", lm_loss)
            self.component_logs.add("router_aux", aux)
            self.component_logs.add("router_z", z)
        return (loss, outputs) if return_outputs else loss

    def log(self, logs: Dict[str, float], *args, **kwargs) -> None:
        if "loss" in logs:
            logs.update(self.component_logs.summarize())
        super().log(logs, *args, **kwargs)


def tokenize_fn(tokenizer, max_length):
    def _fn(batch):
        return tokenizer(batch["text"], truncation=True, max_length=max_length)
    return _fn


def main():
    parser = HfArgumentParser((AuxArguments, TrainingArguments))
    aux_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(aux_args.model_name)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(aux_args.model_name, torch_dtype=torch.bfloat16)

    raw = load_dataset("wikitext", "wikitext-103-raw-v1", split="train")
    ds = raw.map(tokenize_fn(tokenizer, aux_args.max_length), batched=True,
                 remove_columns=raw.column_names)

    trainer = MoETrainer(
        model=model,
        args=training_args,
        train_dataset=ds,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        aux_args=aux_args,
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
