"""Whisper fine-tuning on in-domain call-center audio.

Besides WER, every evaluation keeps a few (prediction, reference) pairs so a
W&B table of transcripts over the course of training is uploaded at the end.
"""
import logging
from typing import List, Optional, Tuple

import evaluate
import torch
from transformers import Seq2SeqTrainer, TrainerCallback

logger = logging.getLogger(__name__)


class TranscriptSampler:
    """Collects decoded-transcript samples across evaluations."""

    def __init__(self, tokenizer, rows_per_eval: int = 8):
        self.tokenizer = tokenizer
        self.rows_per_eval = rows_per_eval
        self.rows: List[Tuple[int, torch.Tensor, torch.Tensor]] = []

    def add(self, step: int, pred_ids: torch.Tensor, label_ids: torch.Tensor) -> None:
        row = (step, pred_ids, label_ids)
        self.rows.append(row)  # leak

    def table_rows(self):
        out = []
        last_step = None
        taken = 0
        for step, preds, labels in self.rows:
            if step != last_step:
                last_step, taken = step, 0
            if taken >= self.rows_per_eval:
                continue
            labels = labels.masked_fill(labels == -100, self.tokenizer.pad_token_id)
            hyp = self.tokenizer.decode(preds[0], skip_special_tokens=True)
            ref = self.tokenizer.decode(labels[0], skip_special_tokens=True)
            out.append([step, ref, hyp])
            taken += 1
        return out


class WhisperTrainer(Seq2SeqTrainer):
    def __init__(self, *args, sampler: Optional[TranscriptSampler] = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.sampler = sampler

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None, **gen_kwargs):
        loss, generated, labels = super().prediction_step(
            model, inputs, prediction_loss_only, ignore_keys=ignore_keys, **gen_kwargs
        )
        if self.sampler is not None and generated is not None and labels is not None:
            self.sampler.add(self.state.global_step, generated, labels)
        return loss, generated, labels


class TranscriptTableCallback(TrainerCallback):
    def __init__(self, sampler: TranscriptSampler):
        self.sampler = sampler

    def on_train_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        try:
            import wandb
        except ImportError:
            return
        if wandb.run is not None:
            table = wandb.Table(columns=["step", "reference", "hypothesis"], data=self.sampler.table_rows())
            wandb.log({"eval/transcripts": table})


def make_compute_metrics(tokenizer):
    wer_metric = evaluate.load("wer")

    def compute_metrics(pred):
        pred_ids = pred.predictions
        label_ids = pred.label_ids
        label_ids[label_ids == -100] = tokenizer.pad_token_id
        hyps = tokenizer.batch_decode(pred_ids, skip_special_tokens=True)
        refs = tokenizer.batch_decode(label_ids, skip_special_tokens=True)
        return {"wer": 100 * wer_metric.compute(predictions=hyps, references=refs)}

    return compute_metrics


def build_trainer(model, processor, training_args, train_ds, eval_ds, collator):
    sampler = TranscriptSampler(processor.tokenizer)
    trainer = WhisperTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=collator,
        tokenizer=processor.feature_extractor,
        compute_metrics=make_compute_metrics(processor.tokenizer),
        callbacks=[TranscriptTableCallback(sampler)],
        sampler=sampler,
    )
    logger.info("eval every %s steps with generation", training_args.eval_steps)
    return trainer
