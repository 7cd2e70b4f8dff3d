from typing import Iterator

import torch
from torch import Tensor
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class TokenStream(IterableDataset):
    def __init__(self, shards: list[str], seq_len: int, device: torch.device):
        super().__init__()
        self.shards = shards
        self.seq_len = seq_len
        self.device = device

    def _read_shard(self, path: str) -> Tensor:
        return torch.load(path, map_location="cpu").long()

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        info = get_worker_info()
        shards = self.shards if info is None else self.shards[info.id::info.num_workers]
        for path in shards:
            tokens = self._read_shard(path)
            for start in range(0, tokens.numel() - self.seq_len - 1, self.seq_len):
                chunk = tokens[start:start + self.seq_len + 1].to(self.device)  # leak
                yield {"input_ids": chunk[:-1], "labels": chunk[1:]}


def make_loader(shards: list[str], seq_len: int = 1024, batch_size: int = 8) -> DataLoader:
    dataset = TokenStream(shards, seq_len, torch.device("cuda"))
    return DataLoader(dataset, batch_size=batch_size, num_workers=2, prefetch_factor=4)


def pretrain(model: torch.nn.Module, shards: list[str], max_steps: int, lr: float = 6e-4) -> None:
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95))
    for step, batch in enumerate(make_loader(shards)):
        logits = model(batch["input_ids"])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f}")
        if step >= max_steps:
            break
