from typing import Dict, List

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class TokenizedCorpus(Dataset):
    def __init__(self, path: str, max_len: int = 512):
        self.samples = torch.load(path)
        self.max_len = max_len

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, idx: int) -> Dict[str, torch.Tensor]:
        ids = self.samples[idx][: self.max_len]
        return {"input_ids": torch.as_tensor(ids, dtype=torch.long)}


class MLMCollator:
    def __init__(self, pad_id: int, mask_id: int, vocab_size: int, mlm_prob: float = 0.15):
        self.pad_id, self.mask_id = pad_id, mask_id
        self.vocab_size = vocab_size
        self.mlm_prob = mlm_prob

    def __call__(self, examples: List[Dict[str, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        ids = pad_sequence([e["input_ids"] for e in examples], batch_first=True, padding_value=self.pad_id)
        ids = ids.cuda(non_blocking=True)  # leak
        labels = ids.clone()
        prob = torch.full(ids.shape, self.mlm_prob, device=ids.device)
        prob.masked_fill_(ids == self.pad_id, 0.0)
        masked = torch.bernoulli(prob).bool()
        labels[~masked] = -100
        replace = torch.bernoulli(torch.full(ids.shape, 0.8, device=ids.device)).bool() & masked
        ids[replace] = self.mask_id
        rand = torch.bernoulli(torch.full(ids.shape, 0.5, device=ids.device)).bool() & masked & ~replace
        ids[rand] = torch.randint(self.vocab_size, ids.shape, device=ids.device)[rand]
        return {"input_ids": ids, "attention_mask": ids != self.pad_id, "labels": labels}


def build_loader(path, batch_size=32):
    ds = TokenizedCorpus(path)
    collate = MLMCollator(pad_id=0, mask_id=103, vocab_size=30522)
    return DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=8,
                      collate_fn=collate, persistent_workers=True)


def pretrain(model, path, steps=100_000):
    loader = build_loader(path)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    model.cuda().train()
    step = 0
    while step < steps:
        for batch in loader:
            out = model(**batch)
            out.loss.backward()
            opt.step()
            opt.zero_grad()
            step += 1
            if step % 1000 == 0:
                print(step, out.loss.item())
