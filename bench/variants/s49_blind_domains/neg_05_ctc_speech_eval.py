import torch
import torch.nn as nn
import torchaudio
from torch.utils.data import DataLoader


class BiLSTMCTC(nn.Module):
    def __init__(self, n_mels=80, hidden=320, num_layers=4, vocab_size=32):
        super().__init__()
        self.frontend = torchaudio.transforms.MelSpectrogram(sample_rate=16000, n_mels=n_mels)
        self.conv = nn.Sequential(
            nn.Conv1d(n_mels, hidden, kernel_size=3, stride=2, padding=1),
            nn.GELU(),
        )
        self.lstm = nn.LSTM(hidden, hidden, num_layers=num_layers, bidirectional=True, batch_first=True)
        self.classifier = nn.Linear(2 * hidden, vocab_size)

    def forward(self, waveforms, wave_lens):
        feats = self.frontend(waveforms).clamp(min=1e-5).log()
        x = self.conv(feats).transpose(1, 2)
        x, _ = self.lstm(x)
        frame_lens = (wave_lens // self.frontend.hop_length + 1 + 1) // 2
        return self.classifier(x).log_softmax(dim=-1), frame_lens


def greedy_decode(log_probs, lens, blank=0):
    hyps = []
    for seq, n in zip(log_probs.argmax(dim=-1), lens):
        seq = torch.unique_consecutive(seq[:n])
        hyps.append([t for t in seq.tolist() if t != blank])
    return hyps


def evaluate(model, loader: DataLoader, device):
    model.eval()
    criterion = nn.CTCLoss(blank=0, zero_infinity=True)
    total_loss = 0.0
    n_batches = 0
    hypotheses = []
    with torch.no_grad():
        for waveforms, wave_lens, targets, target_lens in loader:
            waveforms, targets = waveforms.to(device), targets.to(device)
            log_probs, frame_lens = model(waveforms, wave_lens.to(device))
            loss = criterion(log_probs.transpose(0, 1), targets, frame_lens, target_lens)
            total_loss += loss.item()
            n_batches += 1
            hypotheses.extend(greedy_decode(log_probs, frame_lens))
    return total_loss / max(n_batches, 1), hypotheses


def run_validation(model, dev_set, device, batch_size=16):
    loader = DataLoader(dev_set, batch_size=batch_size, collate_fn=dev_set.collate)
    loss, hyps = evaluate(model, loader, device)
    print(f"dev CTC loss: {float(loss):.3f} ({len(hyps)} utterances)")
    return loss
