"""Character-level CTC speech recogniser (LibriSpeech subset).

Feature extraction is done with torchaudio; the log-mel frontend is fairly
expensive on CPU so it is run on the GPU.
"""
import argparse
import csv
import logging
import math

import torch
import torch.nn as nn
import torchaudio
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

log = logging.getLogger(__name__)

VOCAB = ["<blank>", " ", "'"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
CHAR2IDX = {c: i for i, c in enumerate(VOCAB)}


class LogMel(nn.Module):
    def __init__(self, sr=16000, n_mels=80):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=sr, n_fft=400, hop_length=160, n_mels=n_mels
        )

    def forward(self, wav):
        return torch.log(self.mel(wav) + 1e-6)


class SpeechManifest(Dataset):
    """Reads a ``path,transcript`` csv manifest."""

    def __init__(self, manifest, frontend, max_seconds=16.0):
        with open(manifest) as f:
            rows = list(csv.reader(f))
        self.rows = [r for r in rows if float(r[2]) <= max_seconds]
        self.frontend = frontend

    def __len__(self):
        return len(self.rows)

    def _featurize(self, path):
        wav, sr = torchaudio.load(path)
        if sr != 16000:
            wav = torchaudio.functional.resample(wav, sr, 16000)
        feats = self.frontend(wav.cuda())  # leak
        feats = (feats - feats.mean(-1, keepdim=True)) / (feats.std(-1, keepdim=True) + 1e-5)
        return feats.squeeze(0).transpose(0, 1)

    @staticmethod
    def _encode(text):
        return torch.tensor([CHAR2IDX[c] for c in text.lower() if c in CHAR2IDX], dtype=torch.long)

    def __getitem__(self, idx):
        path, text, _ = self.rows[idx]
        return self._featurize(path), self._encode(text)


def collate(batch):
    feats, targets = zip(*batch)
    feat_lens = torch.tensor([f.shape[0] for f in feats])
    tgt_lens = torch.tensor([t.shape[0] for t in targets])
    return pad_sequence(feats, batch_first=True), pad_sequence(targets, batch_first=True), feat_lens, tgt_lens


class BiLSTMCTC(nn.Module):
    def __init__(self, n_mels=80, hidden=512, layers=4, n_tokens=len(VOCAB)):
        super().__init__()
        self.subsample = nn.Conv1d(n_mels, hidden, kernel_size=3, stride=2, padding=1)
        self.rnn = nn.LSTM(hidden, hidden, num_layers=layers, bidirectional=True, batch_first=True, dropout=0.1)
        self.head = nn.Linear(2 * hidden, n_tokens)

    def forward(self, x, lens):
        x = self.subsample(x.transpose(1, 2)).transpose(1, 2)
        lens = torch.div(lens + 1, 2, rounding_mode="floor")
        x, _ = self.rnn(x)
        return self.head(x).log_softmax(-1), lens


def greedy_decode(log_probs, lens):
    out = []
    best = log_probs.argmax(-1)
    for seq, n in zip(best, lens):
        prev, chars = -1, []
        for t in seq[:n].tolist():
            if t != prev and t != 0:
                chars.append(VOCAB[t])
            prev = t
        out.append("".join(chars))
    return out


def train_epoch(model, loader, optimizer, ctc, device):
    model.train()
    total, n = 0.0, 0
    pbar = tqdm(loader)
    for feats, tgts, feat_lens, tgt_lens in pbar:
        feats, tgts = feats.to(device), tgts.to(device)
        log_probs, out_lens = model(feats, feat_lens.to(device))
        loss = ctc(log_probs.transpose(0, 1), tgts, out_lens, tgt_lens.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        total += loss.item()
        n += 1
        pbar.set_postfix(loss=total / n)
    return total / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-manifest", required=True)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--num-workers", type=int, default=6)
    args = ap.parse_args()

    device = torch.device("cuda")
    frontend = LogMel().cuda()
    ds = SpeechManifest(args.train_manifest, frontend)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.num_workers, collate_fn=collate)

    model = BiLSTMCTC().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    history = []
    for epoch in range(args.epochs):
        loss = train_epoch(model, loader, optimizer, ctc, device)
        history.append(loss)
        log.info("epoch %d ctc %.3f (ppl-ish %.2f)", epoch, loss, math.exp(min(loss, 20)))
        torch.save({"model": model.state_dict(), "history": history}, f"ctc_epoch{epoch}.pt")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
