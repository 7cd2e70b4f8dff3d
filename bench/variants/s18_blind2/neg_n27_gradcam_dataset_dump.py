"""Dump Grad-CAM heatmaps for every image of a validation folder.

    python p27_gradcam_dataset_dump.py --ckpt resnet50_ft.pt --images val/ --out cams/
"""
import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def get_layer(model, dotted):
    mod = model
    for part in dotted.split("."):
        mod = mod[int(part)] if part.isdigit() else getattr(mod, part)
    return mod


class ActivationStore:
    def __init__(self):
        self.value = None

    def __call__(self, module, inputs, output):
        self.value = output


def gradcam_batch(model, layer, images, target=None):
    store = ActivationStore()
    handle = layer.register_forward_hook(store)
    try:
        logits = model(images)
    finally:
        handle.remove()
    cls = logits.argmax(1) if target is None else target
    score = logits.gather(1, cls[:, None]).sum()
    acts = store.value
    grads, = torch.autograd.grad(score, acts)
    weights = grads.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * acts).sum(1, keepdim=True))
    cam = F.interpolate(cam, size=images.shape[-2:], mode="bilinear", align_corners=False)
    cam = cam - cam.amin(dim=(2, 3), keepdim=True)
    cam = cam / cam.amax(dim=(2, 3), keepdim=True).clamp_min(1e-6)
    return cam.detach(), cls.detach(), logits.softmax(1).detach()


def overlay(img, cam, alpha=0.45):
    import matplotlib.cm as cm
    heat = cm.jet(cam)[..., :3]
    return np.clip((1 - alpha) * img + alpha * heat, 0, 1)


def denorm(t, mean, std):
    return (t * torch.tensor(std)[:, None, None] + torch.tensor(mean)[:, None, None]).clamp(0, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--images", required=True)
    ap.add_argument("--out", default="cams")
    ap.add_argument("--layer", default="layer4.2")
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                             transforms.Normalize(mean, std)])
    ds = datasets.ImageFolder(args.images, tf)
    loader = DataLoader(ds, batch_size=args.bs, num_workers=4)

    state = torch.load(args.ckpt, map_location="cpu")
    model = models.resnet50(num_classes=len(ds.classes))
    model.load_state_dict(state["model"] if "model" in state else state)
    model.to(device).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    layer = get_layer(model, args.layer)

    os.makedirs(args.out, exist_ok=True)
    idx = 0
    summary = []
    for images, labels in loader:
        images = images.to(device).requires_grad_(True)
        cams, preds, probs = gradcam_batch(model, layer, images)
        for i in range(images.size(0)):
            img = denorm(images[i].detach().cpu(), mean, std).permute(1, 2, 0).numpy()
            vis = overlay(img, cams[i, 0].cpu().numpy())
            name = os.path.basename(ds.samples[idx][0]).rsplit(".", 1)[0]
            Image.fromarray((vis * 255).astype(np.uint8)).save(os.path.join(args.out, f"{name}_cam.jpg"))
            summary.append((name, ds.classes[labels[i]], ds.classes[preds[i]], float(probs[i, preds[i]])))
            idx += 1
    with open(os.path.join(args.out, "summary.tsv"), "w") as f:
        for row in summary:
            f.write("\t".join(map(str, row)) + "\n")
    print(f"wrote {idx} heatmaps to {args.out}")


if __name__ == "__main__":
    main()
