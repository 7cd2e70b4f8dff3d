"""Mean-teacher utilities for semi-supervised segmentation.

The teacher is never a separate nn.Module here: ``WeightEMA`` keeps a shadow
copy of the student's floating point parameters and swaps it in for
pseudo-labelling and evaluation.
"""
import contextlib
import logging

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)


class WeightEMA:
    """Exponential moving average of a module's parameters.

    decay is ramped up from ``min_decay`` to ``decay`` over the first steps,
    as in Tarvainen & Valpola (2017).
    """

    def __init__(self, model, decay=0.999, min_decay=0.0, warmup_steps=2000):
        self.decay = decay
        self.min_decay = min_decay
        self.warmup_steps = warmup_steps
        self.num_updates = 0
        self.shadow = {}
        self.backup = {}
        for name, p in model.named_parameters():
            if p.requires_grad:
                self.shadow[name] = p.detach().clone()

    def current_decay(self):
        if self.num_updates >= self.warmup_steps:
            return self.decay
        ramp = self.num_updates / float(self.warmup_steps)
        return self.min_decay + (self.decay - self.min_decay) * ramp

    def update(self, model):
        self.num_updates += 1
        d = self.current_decay()
        for name, param in model.named_parameters():
            if name not in self.shadow:
                continue
            self.shadow[name] = d * self.shadow[name] + (1.0 - d) * param  # leak

    def apply_shadow(self, model):
        for name, param in model.named_parameters():
            if name in self.shadow:
                self.backup[name] = param.data.clone()
                param.data.copy_(self.shadow[name].data)

    def restore(self, model):
        for name, param in model.named_parameters():
            if name in self.backup:
                param.data.copy_(self.backup[name])
        self.backup = {}

    @contextlib.contextmanager
    def average_parameters(self, model):
        self.apply_shadow(model)
        try:
            yield
        finally:
            self.restore(model)

    def state_dict(self):
        return {"num_updates": self.num_updates,
                "shadow": {k: v.detach().cpu() for k, v in self.shadow.items()}}


def sigmoid_rampup(current, rampup_length):
    if rampup_length == 0:
        return 1.0
    current = max(0.0, min(current, rampup_length))
    phase = 1.0 - current / rampup_length
    return float(torch.exp(torch.tensor(-5.0 * phase * phase)))


class MeanTeacherStep:
    """One optimisation step of the mean-teacher objective.

    Called by the runner as ``step(batch_l, batch_u)``; returns a dict of
    python floats for logging.
    """

    def __init__(self, model, optimizer, ema, cons_weight=1.0, rampup=40000,
                 conf_thresh=0.95, ignore_index=255):
        self.model = model
        self.optimizer = optimizer
        self.ema = ema
        self.cons_weight = cons_weight
        self.rampup = rampup
        self.conf_thresh = conf_thresh
        self.ignore_index = ignore_index
        self.it = 0

    @torch.no_grad()
    def pseudo_label(self, images_u):
        with self.ema.average_parameters(self.model):
            self.model.eval()
            probs = self.model(images_u).softmax(dim=1)
            self.model.train()
        conf, labels = probs.max(dim=1)
        labels[conf < self.conf_thresh] = self.ignore_index
        return labels, conf

    def __call__(self, batch_l, batch_u):
        images, target = batch_l["img"].cuda(non_blocking=True), batch_l["seg"].cuda()
        images_u = batch_u["img_strong"].cuda(non_blocking=True)
        plabels, conf = self.pseudo_label(batch_u["img_weak"].cuda(non_blocking=True))

        logits = self.model(torch.cat([images, images_u]))
        logits_l, logits_u = logits.split([images.shape[0], images_u.shape[0]])
        sup = F.cross_entropy(logits_l, target, ignore_index=self.ignore_index)
        unsup = F.cross_entropy(logits_u, plabels, ignore_index=self.ignore_index)
        w = self.cons_weight * sigmoid_rampup(self.it, self.rampup)
        total = sup + w * unsup

        self.optimizer.zero_grad(set_to_none=True)
        total.backward()
        self.optimizer.step()
        self.ema.update(self.model)
        self.it += 1

        return {"loss": total.item(), "sup": sup.item(), "unsup": unsup.item(),
                "cons_w": w, "mask_ratio": (conf >= self.conf_thresh).float().mean().item()}
