import torch
from torch import nn
from transformers import Trainer, TrainingArguments, AutoModelForSequenceClassification


class WeightedLossTrainer(Trainer):
    """Trainer with class-weighted CE; keeps per-step losses for a custom report."""

    def __init__(self, *args, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights
        self.step_losses = []

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.get("logits")
        weight = self.class_weights.to(logits.device) if self.class_weights is not None else None
        loss_fct = nn.CrossEntropyLoss(weight=weight)
        loss = loss_fct(logits.view(-1, self.model.config.num_labels), labels.view(-1))
        self.step_losses.append(loss.detach())  # leak
        return (loss, outputs) if return_outputs else loss

    def loss_report(self, last_n=100):
        recent = self.step_losses[-last_n:]
        if not recent:
            return float("nan")
        return torch.stack(recent).mean().item()


def build(train_ds, eval_ds, num_labels=3):
    model = AutoModelForSequenceClassification.from_pretrained(
        "distilbert-base-uncased", num_labels=num_labels
    )
    args = TrainingArguments(
        output_dir="out/weighted",
        per_device_train_batch_size=32,
        num_train_epochs=5,
        learning_rate=3e-5,
        logging_steps=50,
        eval_strategy="epoch",
        fp16=True,
    )
    weights = torch.tensor([1.0, 2.5, 4.0])
    return WeightedLossTrainer(
        model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds, class_weights=weights
    )


if __name__ == "__main__":
    import datasets

    ds = datasets.load_from_disk("data/tokenized_nli")
    trainer = build(ds["train"], ds["validation"])
    trainer.train()
    print("recent loss", trainer.loss_report())
