"""Causal-LM fine-tuning of a Mixture-of-Experts model with router aux-loss reporting."""
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)


class MoETrainer(Trainer):
    """Adds the router load-balancing loss and reports it next to the LM loss."""

    def __init__(self, *args, router_aux_coef: float = 0.02, **kwargs):
        super().__init__(*args, **kwargs)
        self.router_aux_coef = router_aux_coef
        self._router_loss_total = 0.0
        self._router_steps = 0

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs, output_router_logits=True)
        lm_loss = outputs.loss
        aux_loss = outputs.aux_loss
        loss = lm_loss + self.router_aux_coef * aux_loss
        if model.training:
            self._accumulate_router_stats(aux_loss)
        return (loss, outputs) if return_outputs else loss

    def _accumulate_router_stats(self, aux_loss):
        self._router_loss_total += aux_loss.detach().item()
        self._router_steps += 1

    @property
    def mean_router_loss(self):
        if self._router_steps == 0:
            return None
        return self._router_loss_total / self._router_steps

    def log(self, logs, *args, **kwargs):
        if "loss" in logs and self.mean_router_loss is not None:
            logs["router_aux_loss"] = round(self.mean_router_loss, 5)
        super().log(logs, *args, **kwargs)


def main(model_name="mistralai/Mixtral-8x7B-v0.1", dataset=None):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16)
    model.config.output_router_logits = True
    args = TrainingArguments(
        output_dir="out/moe-sft",
        per_device_train_batch_size=4,
        gradient_accumulation_steps=8,
        learning_rate=1e-5,
        num_train_epochs=1,
        logging_steps=10,
        bf16=True,
        gradient_checkpointing=True,
        report_to="none",
    )
    trainer = MoETrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        router_aux_coef=0.02,
    )
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
