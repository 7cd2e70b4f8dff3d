"""Feature-map knowledge distillation (FitNets-style) with teacher channel statistics."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.feature_extraction import create_feature_extractor


class FeatureDistiller(nn.Module):
    def __init__(self, teacher, student, t_layers, s_layers, t_channels, s_channels, alpha=0.5, tau=4.0):
        super().__init__()
        self.teacher = create_feature_extractor(teacher.eval(), {**{l: l for l in t_layers}, "fc": "logits"})
        self.student = create_feature_extractor(student, {**{l: l for l in s_layers}, "fc": "logits"})
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.pairs = list(zip(t_layers, s_layers))
        self.adapters = nn.ModuleDict({
            s: nn.Conv2d(cs, ct, kernel_size=1, bias=False)
            for (t, s), ct, cs in zip(self.pairs, t_channels, s_channels)
        })
        self.alpha, self.tau = alpha, tau
        self.teacher_stats = defaultdict(list)

    @torch.no_grad()
    def _teacher_forward(self, images):
        feats = self.teacher(images)
        for name, f in feats.items():
            if f.dim() == 4:
                self.teacher_stats[name].append(f.mean(dim=(0, 2, 3)))  # leak
        return feats

    def channel_drift(self, name, window=100):
        hist = torch.stack(self.teacher_stats[name][-window:])
        return (hist.std(0) / (hist.mean(0).abs() + 1e-6)).mean().item()

    def forward(self, images, labels):
        t_out = self._teacher_forward(images)
        s_out = self.student(images)
        ce = F.cross_entropy(s_out["logits"], labels)
        kd = F.kl_div(
            F.log_softmax(s_out["logits"] / self.tau, dim=-1),
            F.softmax(t_out["logits"] / self.tau, dim=-1),
            reduction="batchmean",
        ) * self.tau ** 2
        feat = sum(
            F.mse_loss(self.adapters[s](s_out[s]), t_out[t]) for t, s in self.pairs
        ) / len(self.pairs)
        return {"ce": ce, "kd": kd, "feat": feat}


def train(distiller, loader, epochs=200, device="cuda", log_every=100):
    distiller = distiller.to(device)
    params = list(distiller.student.parameters()) + list(distiller.adapters.parameters())
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[150, 180], gamma=0.1)
    step = 0
    for epoch in range(epochs):
        distiller.student.train()
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            losses = distiller(images, labels)
            loss = (1 - distiller.alpha) * losses["ce"] + distiller.alpha * losses["kd"] + losses["feat"]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % log_every == 0:
                drift = {t: distiller.channel_drift(t) for t, _ in distiller.pairs}
                print(step, {k: round(v.item(), 4) for k, v in losses.items()}, drift)
        sched.step()
