"""LibriSpeech loading, character tokenizer, and padding collate."""
import torch
import torchaudio
from torch.nn.utils.rnn import pad_sequence

VOCAB = ["<blank>", " ", "'"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
CHAR2ID = {c: i for i, c in enumerate(VOCAB)}


def encode(text: str):
    return [CHAR2ID[c] for c in text.lower() if c in CHAR2ID]


def decode(ids):
    return "".join(VOCAB[i] for i in ids)


class LibriSpeechCTC(torch.utils.data.Dataset):
    def __init__(self, root: str, split: str = "train-clean-100", n_mels: int = 80):
        self.ds = torchaudio.datasets.LIBRISPEECH(root, url=split, download=False)
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=16000, n_fft=400, hop_length=160, n_mels=n_mels)

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, idx):
        wave, sr, text, *_ = self.ds[idx]
        feats = (self.mel(wave)[0] + 1e-6).log().transpose(0, 1)  # (T, F)
        feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-5)
        return feats, torch.tensor(encode(text), dtype=torch.long)


def collate(batch):
    feats, targets = zip(*batch)
    feat_lens = torch.tensor([f.shape[0] for f in feats])
    tgt_lens = torch.tensor([t.shape[0] for t in targets])
    return (pad_sequence(feats, batch_first=True), feat_lens,
            torch.cat(targets), tgt_lens)


def bucket_by_length(dataset: LibriSpeechCTC, batch_size: int, num_buckets: int = 20):
    """Group utterance indices of similar duration to reduce padding."""
    import random

    lengths = [len(dataset.ds.get_metadata(i)[2]) for i in range(len(dataset))]
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    bucket_size = max(1, len(order) // num_buckets)
    batches = []
    for start in range(0, len(order), bucket_size):
        bucket = order[start:start + bucket_size]
        random.shuffle(bucket)
        batches += [bucket[i:i + batch_size] for i in range(0, len(bucket), batch_size)]
    random.shuffle(batches)
    return batches
