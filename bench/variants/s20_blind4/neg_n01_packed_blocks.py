"""Token-packing dataset for causal LM pretraining.

Documents are concatenated (separated by EOS) and cut into fixed ``block_size``
windows.  The packing is rebuilt every epoch with a different shuffle so that
block boundaries do not always fall on the same tokens.
"""
from __future__ import annotations

import argparse
import bisect
import itertools
import logging
import random
from typing import List, Sequence

import torch
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger(__name__)


class PackedBlocks(Dataset):
    """Concatenate documents and expose ``block_size`` (+1 for the shift) windows."""

    def __init__(self, docs: Sequence[torch.Tensor], block_size: int, eos_id: int, seed: int = 0):
        order = list(range(len(docs)))
        random.Random(seed).shuffle(order)
        pieces = []
        for i in order:
            pieces.append(docs[i])
            pieces.append(torch.tensor([eos_id], dtype=docs[i].dtype))
        self.stream = torch.cat(pieces)
        self.block_size = block_size
        lengths = [len(docs[i]) + 1 for i in order]
        # computed once per packing; lives and dies with this dataset object
        self._starts: List[int] = [0] + list(itertools.accumulate(lengths))[:-1]
        self.seed = seed

    def __len__(self) -> int:
        return (self.stream.numel() - 1) // self.block_size

    def _reset_positions(self, start: int) -> torch.Tensor:
        """Position ids that restart at 0 on every document boundary inside the block."""
        starts = self._starts
        first = bisect.bisect_right(starts, start) - 1
        pos = torch.arange(self.block_size)
        j = first + 1
        while j < len(starts) and starts[j] < start + self.block_size:
            off = starts[j] - start
            pos[off:] = torch.arange(self.block_size - off)
            j += 1
        return pos

    def __getitem__(self, idx):
        start = idx * self.block_size
        chunk = self.stream[start : start + self.block_size + 1]
        return {
            "input_ids": chunk[:-1].clone(),
            "labels": chunk[1:].clone(),
            "position_ids": self._reset_positions(start),
        }


def load_shards(path: str, vocab_size: int, n_docs: int) -> List[torch.Tensor]:
    # Real runs read pre-tokenized .bin shards; the synthetic fallback keeps the
    # script runnable on a laptop.
    g = torch.Generator().manual_seed(1234)
    lens = torch.randint(64, 2048, (n_docs,), generator=g)
    return [torch.randint(0, vocab_size, (int(n),), generator=g) for n in lens]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/tokens")
    p.add_argument("--block-size", type=int, default=1024)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--vocab-size", type=int, default=32000)
    p.add_argument("--eos-id", type=int, default=2)
    p.add_argument("--n-docs", type=int, default=4000)
    return p.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO)
    docs = load_shards(args.data, args.vocab_size, args.n_docs)
    model = torch.nn.Sequential(
        torch.nn.Embedding(args.vocab_size, 256),
        torch.nn.Linear(256, args.vocab_size),
    )
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

    for epoch in range(args.epochs):
        ds = PackedBlocks(docs, args.block_size, args.eos_id, seed=epoch)
        loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=0)
        running = 0.0
        for step, batch in enumerate(loader):
            logits = model(batch["input_ids"])
            loss = torch.nn.functional.cross_entropy(
                logits.view(-1, logits.size(-1)), batch["labels"].view(-1)
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item()
            if step % 100 == 0:
                logger.info("epoch %d step %d loss %.4f", epoch, step, running / (step + 1))


if __name__ == "__main__":
    main()
