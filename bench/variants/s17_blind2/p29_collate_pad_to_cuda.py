"""Token-classification (NER) training with a padding collate function and bucketed batches."""
from functools import partial

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class NERDataset(Dataset):
    def __init__(self, examples, tokenizer, label2id, max_len=256):
        self.examples = examples
        self.tok = tokenizer
        self.label2id = label2id
        self.max_len = max_len

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        ex = self.examples[idx]
        enc = self.tok(ex["tokens"], is_split_into_words=True, truncation=True, max_length=self.max_len)
        word_ids = enc.word_ids()
        labels = [-100 if w is None else self.label2id[ex["tags"][w]] for w in word_ids]
        return torch.tensor(enc["input_ids"]), torch.tensor(labels)


def pad_collate(batch, pad_id, device):
    ids, labels = zip(*batch)
    input_ids = pad_sequence(ids, batch_first=True, padding_value=pad_id)
    labels = pad_sequence(labels, batch_first=True, padding_value=-100)
    attention_mask = (input_ids != pad_id).long()
    out = {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}
    return {k: v.cuda(device, non_blocking=True) for k, v in out.items()}  # leak


def build_loader(dataset, tokenizer, batch_size=32, device=0):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,
        num_workers=4,
        persistent_workers=True,
        multiprocessing_context="spawn",
        collate_fn=partial(pad_collate, pad_id=tokenizer.pad_token_id, device=device),
    )


def train(model, dataset, tokenizer, epochs=5, lr=3e-5, device=0):
    model = model.cuda(device)
    loader = build_loader(dataset, tokenizer, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr, total_steps=epochs * len(loader),
                                                    pct_start=0.1)
    for epoch in range(epochs):
        model.train()
        for step, batch in enumerate(loader):
            out = model(**batch)
            optimizer.zero_grad()
            out.loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {out.loss.item():.4f}")
