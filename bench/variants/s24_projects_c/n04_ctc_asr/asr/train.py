"""Fine-tune a Conformer-CTC encoder with transformers.Trainer.

    python -m asr.train --train-manifest train.jsonl --eval-manifest dev.jsonl --vocab vocab.txt
"""
import argparse
import logging
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torchaudio
from transformers import Trainer, TrainerCallback, TrainingArguments

from asr import features
from asr.data import CharTokenizer, CTCCollator, ManifestDataset

logger = logging.getLogger("asr")


class ConformerCTC(nn.Module):
    def __init__(self, vocab_size: int, n_mels: int = 80, d_model: int = 256, layers: int = 12):
        super().__init__()
        self.subsample = nn.Sequential(nn.Conv1d(n_mels, d_model, 3, stride=2, padding=1), nn.GELU(),
                                       nn.Conv1d(d_model, d_model, 3, stride=2, padding=1), nn.GELU())
        self.encoder = torchaudio.models.Conformer(input_dim=d_model, num_heads=4, ffn_dim=1024,
                                                   num_layers=layers, depthwise_conv_kernel_size=31)
        self.out = nn.Linear(d_model, vocab_size)
        self.ctc = nn.CTCLoss(blank=0, zero_infinity=True)

    def forward(self, input_features, feature_lengths, labels=None):
        x = self.subsample(input_features.transpose(1, 2)).transpose(1, 2)
        lengths = torch.div(torch.div(feature_lengths - 1, 2, rounding_mode="floor"), 2, rounding_mode="floor") + 1
        x, lengths = self.encoder(x, lengths.clamp_max(x.shape[1]))
        log_probs = self.out(x).log_softmax(-1)
        out = {"logits": log_probs}
        if labels is not None:
            tgt_len = (labels != -100).sum(-1)
            out["loss"] = self.ctc(log_probs.transpose(0, 1), labels.clamp_min(0), lengths, tgt_len)
        return out


class SpecAugTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        if model.training:
            inputs["input_features"] = features.spec_augment(inputs["input_features"], inputs["feature_lengths"],
                                                             device=inputs["input_features"].device)
        out = model(**inputs)
        return (out["loss"], out) if return_outputs else out["loss"]


class LossWindowCallback(TrainerCallback):
    """Warns when the recent train loss stalls; keeps only a short window of floats."""

    def __init__(self, window: int = 50, min_improvement: float = 0.01):
        self.recent = deque(maxlen=window)
        self.min_improvement = min_improvement

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.recent.append(float(logs["loss"]))
            if len(self.recent) == self.recent.maxlen:
                first, last = np.mean(list(self.recent)[:10]), np.mean(list(self.recent)[-10:])
                if first - last < self.min_improvement * first:
                    logger.warning("train loss plateau at step %d (%.3f -> %.3f)", state.global_step, first, last)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-manifest", required=True)
    ap.add_argument("--eval-manifest", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--out", default="exp/conformer_ctc")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    tok = CharTokenizer(args.vocab)
    train_ds = ManifestDataset(args.train_manifest, tok)
    eval_ds = ManifestDataset(args.eval_manifest, tok)
    targs = TrainingArguments(args.out, per_device_train_batch_size=32, per_device_eval_batch_size=32,
                              learning_rate=1e-3, warmup_steps=5000, max_steps=150_000, bf16=True,
                              dataloader_num_workers=8, logging_steps=50, eval_strategy="steps", eval_steps=5000,
                              save_steps=5000, save_total_limit=3, remove_unused_columns=False,
                              label_names=["labels"])
    trainer = SpecAugTrainer(model=ConformerCTC(len(tok.vocab)), args=targs, train_dataset=train_ds,
                             eval_dataset=eval_ds, data_collator=CTCCollator(),
                             callbacks=[LossWindowCallback()])
    trainer.train()


if __name__ == "__main__":
    main()
