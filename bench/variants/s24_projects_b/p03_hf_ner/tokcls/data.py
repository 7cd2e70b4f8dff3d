"""Dataset loading and label alignment for CoNLL-style NER corpora."""
from __future__ import annotations

import logging
from typing import Dict, List

import numpy as np
from datasets import DatasetDict, load_dataset

logger = logging.getLogger(__name__)


def load_ner(name: str, config: str | None = None, cache_dir: str | None = None) -> DatasetDict:
    ds = load_dataset(name, config, cache_dir=cache_dir)
    logger.info("loaded %s: %s", name, {k: len(v) for k, v in ds.items()})
    return ds


def label_names(ds: DatasetDict, column: str = "ner_tags") -> List[str]:
    return ds["train"].features[column].feature.names


def tokenize_and_align(examples: Dict, tokenizer, label_all_tokens: bool = False,
                       max_length: int = 256, column: str = "ner_tags") -> Dict:
    """Tokenise pre-split words and copy word labels onto sub-word tokens.

    Continuation sub-tokens get ``-100`` unless ``label_all_tokens`` is set, so
    they are ignored by the cross-entropy loss.
    """
    enc = tokenizer(examples["tokens"], truncation=True, max_length=max_length,
                    is_split_into_words=True)
    all_labels = []
    for i, word_labels in enumerate(examples[column]):
        word_ids = enc.word_ids(batch_index=i)
        prev = None
        labels = []
        for wid in word_ids:
            if wid is None:
                labels.append(-100)
            elif wid != prev:
                labels.append(word_labels[wid])
            else:
                labels.append(word_labels[wid] if label_all_tokens else -100)
            prev = wid
        all_labels.append(labels)
    enc["labels"] = all_labels
    return enc


def build_compute_metrics(names: List[str]):
    import evaluate

    seqeval = evaluate.load("seqeval")

    def compute_metrics(pred):
        logits, labels = pred
        preds = np.argmax(logits, axis=-1)
        true_preds = [[names[p] for p, l in zip(ps, ls) if l != -100]
                      for ps, ls in zip(preds, labels)]
        true_labels = [[names[l] for p, l in zip(ps, ls) if l != -100]
                       for ps, ls in zip(preds, labels)]
        res = seqeval.compute(predictions=true_preds, references=true_labels)
        return {k: res[f"overall_{k}"] for k in ("precision", "recall", "f1", "accuracy")}

    return compute_metrics
