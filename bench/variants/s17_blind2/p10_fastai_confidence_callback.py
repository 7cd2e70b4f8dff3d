"""fastai vision fine-tuning with a callback that tracks prediction confidence."""
import torch
import torch.nn.functional as F
from fastai.callback.core import Callback
from fastai.vision.all import (
    ImageDataLoaders,
    Resize,
    aug_transforms,
    error_rate,
    resnet50,
    vision_learner,
)


class ConfidenceTracker(Callback):
    "Records training-set softmax confidences and reports their histogram each epoch."
    order = 60
    run_valid = False

    def __init__(self, n_bins=10):
        self.n_bins = n_bins

    def before_fit(self):
        self.confs = []
        self.epoch_sizes = []

    def after_batch(self):
        if not self.training:
            return
        probs = F.softmax(self.learn.pred.detach().float(), dim=-1)
        self.confs.append(probs.max(dim=-1).values)  # leak

    def after_epoch(self):
        n = sum(self.epoch_sizes)
        confs = torch.cat(self.confs)
        epoch_confs = confs[n:]
        self.epoch_sizes.append(epoch_confs.numel())
        hist = torch.histc(epoch_confs, bins=self.n_bins, min=0.0, max=1.0)
        hist = (hist / hist.sum()).tolist()
        print(f"epoch {self.epoch}: mean conf {epoch_confs.mean().item():.3f} "
              f"hist {[round(h, 3) for h in hist]}")


def main(path, epochs=12, lr=2e-3):
    dls = ImageDataLoaders.from_folder(
        path,
        valid_pct=0.2,
        seed=42,
        item_tfms=Resize(460),
        batch_tfms=aug_transforms(size=224, min_scale=0.75),
        bs=64,
        num_workers=8,
    )
    learn = vision_learner(dls, resnet50, metrics=error_rate, cbs=[ConfidenceTracker()])
    learn.to_fp16()
    learn.fine_tune(epochs, base_lr=lr, freeze_epochs=1)
    learn.export("model.pkl")


if __name__ == "__main__":
    main("data/images")
