import argparse

import torch
import torch.nn as nn
import torchaudio


class ConformerCTC(nn.Module):
    def __init__(self, n_mels=80, d=256, vocab=32):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv1d(n_mels, d, 3, stride=2, padding=1), nn.SiLU())
        self.enc = torchaudio.models.Conformer(
            input_dim=d, num_heads=4, ffn_dim=1024, num_layers=8, depthwise_conv_kernel_size=31
        )
        self.out = nn.Linear(d, vocab)

    def forward(self, feats, lengths):
        x = self.sub(feats.transpose(1, 2)).transpose(1, 2)
        lengths = (lengths + 1) // 2
        x, lengths = self.enc(x, lengths)
        return self.out(x).log_softmax(-1), lengths


def run_epoch(model, loader, ctc, opt, device):
    model.train()
    epoch_loss = 0.0
    for feats, feat_lens, tokens, tok_lens in loader:
        feats, feat_lens = feats.to(device), feat_lens.to(device)
        tokens, tok_lens = tokens.to(device), tok_lens.to(device)
        log_probs, out_lens = model(feats, feat_lens)
        loss = ctc(log_probs.transpose(0, 1), tokens, out_lens, tok_lens)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        epoch_loss += loss  # leak
    return epoch_loss / len(loader)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--manifest", default="data/train.pt")
    args = ap.parse_args()
    device = torch.device("cuda")
    model = ConformerCTC().to(device)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
    loader = torch.load(args.manifest)
    for ep in range(args.epochs):
        avg = run_epoch(model, loader, ctc, opt, device)
        print(f"epoch {ep} ctc {avg.item():.3f}")


if __name__ == "__main__":
    main()
