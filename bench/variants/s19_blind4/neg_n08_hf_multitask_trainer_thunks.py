"""Fine-tune a clinical BERT on ICD chapter classification with an auxiliary
negation-tagging head.  Built on the HF Trainer; the two loss components are
reported separately in the logs / W&B.
"""
import logging
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
from datasets import load_from_disk
from sklearn.metrics import f1_score
from transformers import (AutoModel, AutoTokenizer, HfArgumentParser, PreTrainedModel, Trainer,
                          TrainingArguments, DataCollatorForTokenClassification)

logger = logging.getLogger(__name__)


@dataclass
class ModelArgs:
    backbone: str = field(default="emilyalsentzer/Bio_ClinicalBERT")
    num_chapters: int = field(default=22)
    aux_weight: float = field(default=0.3)
    dataset_dir: str = field(default="data/mimic_icd_chapters")
    max_length: Optional[int] = field(default=512)


class MultiTaskHead(nn.Module):
    def __init__(self, backbone_name, num_chapters):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(backbone_name)
        hid = self.encoder.config.hidden_size
        self.cls_head = nn.Linear(hid, num_chapters)
        self.neg_head = nn.Linear(hid, 3)  # O / B-NEG / I-NEG

    def forward(self, input_ids, attention_mask, **_):
        h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.cls_head(h[:, 0]), self.neg_head(h)


class MultiTaskTrainer(Trainer):
    def __init__(self, *args, aux_weight=0.3, **kwargs):
        super().__init__(*args, **kwargs)
        self.aux_weight = aux_weight
        self._component_loggers = []

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        chapter = inputs.pop("chapter")
        neg_tags = inputs.pop("labels")
        cls_logits, tag_logits = model(**inputs)
        cls_loss = nn.functional.binary_cross_entropy_with_logits(cls_logits, chapter.float())
        tag_loss = nn.functional.cross_entropy(tag_logits.flatten(0, 1), neg_tags.flatten(), ignore_index=-100)
        loss = cls_loss + self.aux_weight * tag_loss
        if model.training:
            cls_val, tag_val = cls_loss.item(), tag_loss.item()
            self._component_loggers.append(lambda: (cls_val, tag_val))
        outputs = {"cls_logits": cls_logits, "tag_logits": tag_logits}
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, *args, **kwargs):
        if "loss" in logs and self._component_loggers:
            comps = np.array([fn() for fn in self._component_loggers])
            self._component_loggers.clear()
            logs["cls_loss"] = round(float(comps[:, 0].mean()), 4)
            logs["neg_loss"] = round(float(comps[:, 1].mean()), 4)
        super().log(logs, *args, **kwargs)

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        chapter = inputs["chapter"]
        with torch.no_grad():
            loss, out = self.compute_loss(model, dict(inputs), return_outputs=True)
        return loss.detach(), out["cls_logits"].detach(), chapter


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    preds = (1 / (1 + np.exp(-logits))) > 0.5
    return {"micro_f1": f1_score(labels, preds, average="micro"),
            "macro_f1": f1_score(labels, preds, average="macro", zero_division=0)}


class MultiTaskCollator(DataCollatorForTokenClassification):
    def __call__(self, features):
        chapters = [f.pop("chapter") for f in features]
        batch = super().__call__(features)
        batch["chapter"] = torch.tensor(np.stack(chapters), dtype=torch.float32)
        return batch


def main():
    parser = HfArgumentParser((ModelArgs, TrainingArguments))
    margs, targs = parser.parse_args_into_dataclasses()
    logging.basicConfig(level=logging.INFO)

    tok = AutoTokenizer.from_pretrained(margs.backbone)
    ds = load_from_disk(margs.dataset_dir)
    model = MultiTaskHead(margs.backbone, margs.num_chapters)
    targs.remove_unused_columns = False
    targs.label_names = ["chapter"]

    trainer = MultiTaskTrainer(
        model=model,
        args=targs,
        train_dataset=ds["train"],
        eval_dataset=ds["validation"],
        data_collator=MultiTaskCollator(tok, max_length=margs.max_length),
        compute_metrics=compute_metrics,
        aux_weight=margs.aux_weight,
    )
    trainer.train()
    metrics = trainer.evaluate(ds["test"], metric_key_prefix="test")
    trainer.log_metrics("test", metrics)
    trainer.save_metrics("test", metrics)
    if isinstance(model, PreTrainedModel):
        model.save_pretrained(targs.output_dir)
    else:
        torch.save(model.state_dict(), f"{targs.output_dir}/multitask.bin")


if __name__ == "__main__":
    main()
