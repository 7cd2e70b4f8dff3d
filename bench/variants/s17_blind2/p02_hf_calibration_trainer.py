"""Sequence classification fine-tuning with running calibration (ECE) logging."""
import torch
import torch.nn as nn
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)


def expected_calibration_error(conf: torch.Tensor, correct: torch.Tensor, n_bins: int = 15) -> float:
    bins = torch.linspace(0, 1, n_bins + 1, device=conf.device)
    ece = torch.zeros((), device=conf.device)
    for lo, hi in zip(bins[:-1], bins[1:]):
        in_bin = (conf > lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.float().mean() * (conf[in_bin].mean() - correct[in_bin].mean()).abs()
    return ece.item()


class CalibrationTrainer(Trainer):
    def __init__(self, *args, calib_bins: int = 15, label_smoothing: float = 0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.calib_bins = calib_bins
        self.label_smoothing = label_smoothing
        self._calib = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        loss = nn.functional.cross_entropy(
            logits.view(-1, model.config.num_labels), labels.view(-1),
            label_smoothing=self.label_smoothing,
        )
        if model.training:
            self._track_calibration(logits, labels)
        return (loss, outputs) if return_outputs else loss

    def _track_calibration(self, logits, labels):
        probs = logits.detach().float().softmax(-1)
        conf, pred = probs.max(-1)
        self._calib.append(torch.stack([conf, (pred == labels).float()], dim=1))  # leak

    def log(self, logs, *args, **kwargs):
        if self._calib and "loss" in logs:
            stats = torch.cat(self._calib)
            logs["train_ece"] = round(expected_calibration_error(stats[:, 0], stats[:, 1], self.calib_bins), 4)
        super().log(logs, *args, **kwargs)


def main(model_name="roberta-base", dataset=None):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=3)
    args = TrainingArguments(
        output_dir="out/calib",
        per_device_train_batch_size=32,
        learning_rate=2e-5,
        num_train_epochs=3,
        logging_steps=50,
        bf16=True,
        report_to="none",
    )
    trainer = CalibrationTrainer(
        model=model,
        args=args,
        train_dataset=dataset["train"],
        eval_dataset=dataset["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
    )
    trainer.train()


if __name__ == "__main__":
    main()
