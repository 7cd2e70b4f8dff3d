import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda")


class TokenizedCorpus(Dataset):
    def __init__(self, sequences, max_len=512):
        self.sequences = [s[:max_len] for s in sequences]

    def __len__(self):
        return len(self.sequences)

    def __getitem__(self, i):
        return torch.tensor(self.sequences[i], dtype=torch.long)


def pad_collate(batch, pad_id=0):
    max_len = max(x.size(0) for x in batch)
    input_ids = torch.stack([F.pad(x, (0, max_len - x.size(0)), value=pad_id) for x in batch])
    attention_mask = (input_ids != pad_id).long()
    out = {"input_ids": input_ids, "attention_mask": attention_mask}
    return {k: v.to(device) for k, v in out.items()}  # leak


def build_loader(sequences, batch_size=16):
    return DataLoader(
        TokenizedCorpus(sequences),
        batch_size=batch_size,
        shuffle=True,
        num_workers=4,
        collate_fn=pad_collate,
        persistent_workers=True,
    )
