# Speech enhancement training loop (waveform model + multi-resolution STFT loss).
# Based on the solver layout used by several denoising papers: the solver owns the
# model/optimizer, and `_run_one_epoch` is shared between training and cross-validation.
import json
import logging
import os
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


def stft_mag(x, fft_size, hop, win):
    window = torch.hann_window(win, device=x.device)
    spec = torch.stft(x, fft_size, hop, win, window, return_complex=True)
    return torch.clamp(spec.abs(), min=1e-7)


@dataclass
class LossOutput:
    total: torch.Tensor
    l1: torch.Tensor
    sc: torch.Tensor
    mag: torch.Tensor


class MultiResolutionSTFTLoss(nn.Module):
    def __init__(self, fft_sizes=(1024, 2048, 512), hops=(120, 240, 50), wins=(600, 1200, 240),
                 factor_sc=0.5, factor_mag=0.5):
        super().__init__()
        self.resolutions = list(zip(fft_sizes, hops, wins))
        self.factor_sc = factor_sc
        self.factor_mag = factor_mag

    def forward(self, est, clean):
        est, clean = est.squeeze(1), clean.squeeze(1)
        sc_loss, mag_loss = 0.0, 0.0
        for fft, hop, win in self.resolutions:
            e, c = stft_mag(est, fft, hop, win), stft_mag(clean, fft, hop, win)
            sc_loss = sc_loss + torch.norm(c - e, p="fro") / torch.norm(c, p="fro")
            mag_loss = mag_loss + F.l1_loss(torch.log(c), torch.log(e))
        sc_loss = sc_loss / len(self.resolutions)
        mag_loss = mag_loss / len(self.resolutions)
        l1 = F.l1_loss(est, clean)
        total = l1 + self.factor_sc * sc_loss + self.factor_mag * mag_loss
        return LossOutput(total=total, l1=l1, sc=sc_loss, mag=mag_loss)


class Solver:
    def __init__(self, data, model, optimizer, args):
        self.tr_loader = data["tr_loader"]
        self.cv_loader = data["cv_loader"]
        self.model = model
        self.optimizer = optimizer
        self.criterion = MultiResolutionSTFTLoss()
        self.device = args.device
        self.epochs = args.epochs
        self.max_norm = args.max_norm
        self.checkpoint_file = args.checkpoint_file
        self.history = []
        self.best_state = None

    def _process_batch(self, noisy, clean):
        noisy, clean = noisy.to(self.device), clean.to(self.device)
        estimate = self.model(noisy)
        return self.criterion(estimate, clean)

    def _backward(self, loss_out):
        self.optimizer.zero_grad()
        loss_out.total.backward()
        if self.max_norm:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.step()

    def _run_one_epoch(self, epoch, cross_valid=False):
        loader = self.cv_loader if cross_valid else self.tr_loader
        label = "Valid" if cross_valid else "Train"
        total_loss = 0
        start = time.time()
        for i, (noisy, clean) in enumerate(loader):
            loss_out = self._process_batch(noisy, clean)
            if not cross_valid:
                self._backward(loss_out)
                total_loss += loss_out.total.item()
            else:
                total_loss += loss_out.total  # leak
            if i % 100 == 0:
                logger.info("%s | epoch %d | it %d/%d | loss %.5f | %.1f ms/it", label, epoch + 1,
                            i, len(loader), float(total_loss) / (i + 1),
                            1000 * (time.time() - start) / (i + 1))
        return float(total_loss) / (i + 1)

    def train(self):
        for epoch in range(len(self.history), self.epochs):
            self.model.train()
            train_loss = self._run_one_epoch(epoch)
            self.model.eval()
            valid_loss = self._run_one_epoch(epoch, cross_valid=True)

            best_loss = min([h["valid"] for h in self.history] + [valid_loss])
            metrics = {"train": train_loss, "valid": valid_loss, "best": best_loss}
            if valid_loss == best_loss:
                self.best_state = {k: v.cpu().clone() for k, v in self.model.state_dict().items()}
            self.history.append(metrics)
            logger.info("Summary | epoch %d | %s", epoch + 1, json.dumps(metrics))
            self._serialize()

    def _serialize(self):
        package = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                   "history": self.history, "best_state": self.best_state}
        tmp = self.checkpoint_file + ".tmp"
        torch.save(package, tmp)
        os.replace(tmp, self.checkpoint_file)
