"""Semantic-segmentation runner with a tiny mmengine-like hook system.

HardExampleHook remembers the worst validation predictions and dumps them when
training finishes.
"""
import argparse
import os
from collections import defaultdict

import torch
import torch.nn.functional as F
from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
from torchvision.utils import save_image


class MessageHub:
    def __init__(self):
        self._callbacks = defaultdict(list)
        self.scalars = {}

    def register_callback(self, event, fn):
        self._callbacks[event].append(fn)  # leak

    def emit(self, event, **kwargs):
        for fn in self._callbacks[event]:
            fn(**kwargs)

    def update_scalar(self, key, value):
        self.scalars[key] = float(value)


class Hook:
    priority = 50

    def before_run(self, runner): pass
    def after_train_iter(self, runner, batch_idx, outputs): pass
    def after_val_iter(self, runner, batch_idx, batch, outputs): pass
    def after_run(self, runner): pass


class LoggerHook(Hook):
    def __init__(self, interval=50):
        self.interval = interval

    def after_train_iter(self, runner, batch_idx, outputs):
        if batch_idx % self.interval == 0:
            print(f"[iter {runner.iter}] loss={outputs['loss'].item():.4f} lr={runner.optim.param_groups[0]['lr']:.2e}")


class HardExampleHook(Hook):
    def __init__(self, out_dir, miou_thr=0.3):
        self.out_dir = out_dir
        self.miou_thr = miou_thr

    def after_val_iter(self, runner, batch_idx, batch, outputs):
        pred = outputs["pred"]
        miou = outputs["miou"]
        if miou >= self.miou_thr:
            return
        img = batch[0]
        epoch = runner.epoch

        def _dump(**_):
            path = os.path.join(self.out_dir, f"ep{epoch:03d}_b{batch_idx:05d}.png")
            vis = torch.cat([img[:4].cpu(), pred[:4, None].float().div(20).expand(-1, 3, -1, -1).cpu()])
            save_image(vis, path, nrow=4)

        runner.hub.register_callback("after_run", _dump)

    def after_run(self, runner):
        os.makedirs(self.out_dir, exist_ok=True)
        runner.hub.emit("after_run")


def batch_miou(pred, target, n_cls, ignore=255):
    valid = target != ignore
    ious = []
    for c in range(n_cls):
        p, t = (pred == c) & valid, (target == c) & valid
        union = (p | t).sum()
        if union > 0:
            ious.append((p & t).sum().float() / union)
    return torch.stack(ious).mean().item() if ious else 1.0


class Runner:
    def __init__(self, model, optim, train_loader, val_loader, n_cls, device, hooks=()):
        self.model, self.optim = model, optim
        self.train_loader, self.val_loader = train_loader, val_loader
        self.n_cls, self.device = n_cls, device
        self.hooks = sorted(hooks, key=lambda h: h.priority)
        self.hub = MessageHub()
        self.iter = self.epoch = 0

    def call_hook(self, name, **kw):
        for h in self.hooks:
            getattr(h, name)(self, **kw)

    def train_epoch(self):
        self.model.train()
        for i, (img, mask) in enumerate(self.train_loader):
            img, mask = img.to(self.device), mask.to(self.device)
            out = self.model(img)["out"]
            loss = F.cross_entropy(out, mask, ignore_index=255)
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            self.call_hook("after_train_iter", batch_idx=i, outputs={"loss": loss})
            self.iter += 1

    @torch.no_grad()
    def val_epoch(self):
        self.model.eval()
        for i, (img, mask) in enumerate(self.val_loader):
            img, mask = img.to(self.device), mask.to(self.device)
            pred = self.model(img)["out"].argmax(1)
            miou = batch_miou(pred, mask, self.n_cls)
            self.hub.update_scalar("val/last_miou", miou)
            self.call_hook("after_val_iter", batch_idx=i, batch=(img, mask), outputs={"pred": pred, "miou": miou})

    def run(self, max_epochs):
        self.call_hook("before_run")
        for self.epoch in range(max_epochs):
            self.train_epoch()
            self.val_epoch()
        self.call_hook("after_run")


def build_loaders(root, bs):
    from torchvision.datasets import VOCSegmentation
    import torchvision.transforms.v2 as T
    tf = T.Compose([T.ToImage(), T.Resize((384, 384)), T.ToDtype(torch.float32, scale=True)])

    def to_pair(img, mask):
        img, mask = tf(img, mask)
        return img, mask.squeeze(0).long()

    tr = VOCSegmentation(root, image_set="train", transforms=to_pair)
    va = VOCSegmentation(root, image_set="val", transforms=to_pair)
    return (torch.utils.data.DataLoader(tr, bs, shuffle=True, num_workers=4, drop_last=True),
            torch.utils.data.DataLoader(va, bs, num_workers=4))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--voc", default="/data/VOCdevkit")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--work-dir", default="work_dirs/deeplab_voc")
    args = ap.parse_args()
    dev = torch.device("cuda")
    model = deeplabv3_mobilenet_v3_large(num_classes=21).to(dev)
    optim = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    tl, vl = build_loaders(args.voc, 8)
    hooks = [LoggerHook(50), HardExampleHook(os.path.join(args.work_dir, "hard"))]
    Runner(model, optim, tl, vl, 21, dev, hooks).run(args.epochs)
