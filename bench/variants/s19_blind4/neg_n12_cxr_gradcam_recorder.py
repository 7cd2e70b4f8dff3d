"""DenseNet-121 fine-tuning on the pneumonia chest X-ray set, with Grad-CAM.

Grad-CAM heat maps for a few validation images are produced at the end of
every epoch; the hooks on the last dense block are only attached for that.
"""
import argparse
import os
import time

import numpy as np
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class GradCam:
    """Context manager: hooks live only while the heat maps are computed."""

    def __init__(self, layer):
        self.layer = layer
        self.activation = None
        self.gradient = None
        self._handles = []

    def __enter__(self):
        self._handles = [self.layer.register_forward_hook(self._save_activation),
                         self.layer.register_full_backward_hook(self._save_gradient)]
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []
        self.activation = self.gradient = None
        return False

    def _save_activation(self, module, inp, out):
        self.activation = out.detach()

    def _save_gradient(self, module, grad_in, grad_out):
        self.gradient = grad_out[0].detach()

    def cam(self):
        weights = self.gradient.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activation).sum(1))
        cam = cam - cam.amin(dim=(1, 2), keepdim=True)
        return cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-8)


def build_loaders(root, img_size, bs, workers):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    tf_train = transforms.Compose([transforms.Grayscale(3), transforms.RandomResizedCrop(img_size, scale=(0.8, 1.0)),
                                   transforms.RandomRotation(7), transforms.ToTensor(), norm])
    tf_eval = transforms.Compose([transforms.Grayscale(3), transforms.Resize((img_size, img_size)),
                                  transforms.ToTensor(), norm])
    train_ds = datasets.ImageFolder(os.path.join(root, "train"), tf_train)
    val_ds = datasets.ImageFolder(os.path.join(root, "val"), tf_eval)
    return (DataLoader(train_ds, bs, shuffle=True, num_workers=workers, pin_memory=True, drop_last=True),
            DataLoader(val_ds, bs, num_workers=workers))


def train_one_epoch(epoch, model, loader, optimizer, device, log_interval=50):
    model.train()
    losses, top1 = AverageMeter(), AverageMeter()
    end = time.time()
    for batch_idx, (images, target) in enumerate(loader):
        images, target = images.to(device), target.to(device)
        output = model(images)
        loss = F.cross_entropy(output, target, label_smoothing=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), images.size(0))
        top1.update((output.argmax(1) == target).float().mean().item() * 100, images.size(0))
        if batch_idx % log_interval == 0:
            print(f"Train: {epoch} [{batch_idx:>4d}/{len(loader)}]  Loss: {losses.val:.4f} ({losses.avg:.4f})  "
                  f"Acc@1: {top1.avg:.2f}  Time: {time.time() - end:.1f}s")
    return {"loss": losses.avg, "top1": top1.avg}


def gradcam_examples(model, layer, loader, device, n=8):
    model.eval()
    images, target = next(iter(loader))
    images = images[:n].to(device).requires_grad_(True)
    with GradCam(layer) as gc:
        logits = model(images)
        model.zero_grad()
        logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()
        cams = F.interpolate(gc.cam()[:, None], size=images.shape[-2:], mode="bilinear")
    model.zero_grad(set_to_none=True)
    return cams.squeeze(1).cpu().numpy(), target[:n].numpy()


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    probs, labels = [], []
    for images, target in loader:
        probs.append(model(images.to(device)).softmax(1)[:, 1].cpu())
        labels.append(target)
    probs, labels = torch.cat(probs), torch.cat(labels)
    acc = ((probs > 0.5).long() == labels).float().mean().item()
    return acc, probs.numpy(), labels.numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/chest_xray")
    ap.add_argument("--img-size", type=int, default=320)
    ap.add_argument("--bs", type=int, default=24)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--out", default="output/densenet_cxr")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    device = torch.device("cuda")
    train_dl, val_dl = build_loaders(args.data, args.img_size, args.bs, args.workers)
    model = timm.create_model("densenet121", pretrained=True, num_classes=2).to(device)
    cam_layer = model.features.denseblock4
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)

    history = {"train_loss": [], "val_acc": []}
    for epoch in range(args.epochs):
        stats = train_one_epoch(epoch, model, train_dl, optimizer, device)
        acc, probs, labels = validate(model, val_dl, device)
        history["train_loss"].append(stats["loss"])
        history["val_acc"].append(acc)
        cams, cam_labels = gradcam_examples(model, cam_layer, val_dl, device)
        np.save(os.path.join(args.out, f"cams_epoch{epoch:02d}.npy"), cams)
        np.save(os.path.join(args.out, f"val_probs_epoch{epoch:02d}.npy"), np.stack([probs, labels]))
        print(f"epoch {epoch}: val acc {acc:.4f}")
    np.save(os.path.join(args.out, "history.npy"), history, allow_pickle=True)


if __name__ == "__main__":
    main()
