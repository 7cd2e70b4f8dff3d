"""Gatys-style neural style transfer, batch mode over a directory of content images."""
import argparse
import os
from pathlib import Path

import torch
import torch.nn.functional as F
from PIL import Image
from torchvision import models, transforms
from torchvision.utils import save_image

STYLE_LAYERS = {"0": "conv1_1", "5": "conv2_1", "10": "conv3_1", "19": "conv4_1", "28": "conv5_1"}
CONTENT_LAYER = "21"  # conv4_2
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


class VGGFeatures:
    """Runs VGG19 up to conv5_1 and keeps intermediate activations for the current input."""

    def __init__(self, device):
        self.net = models.vgg19(weights=models.VGG19_Weights.IMAGENET1K_V1).features[:29].to(device).eval()
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.mean, self.std = MEAN.to(device), STD.to(device)
        self._scratch = []

    def __call__(self, img):
        x = (img - self.mean) / self.std
        style, content = {}, None
        self._scratch = []
        for name, layer in self.net._modules.items():
            x = layer(x)
            self._scratch.append(x)
            if name in STYLE_LAYERS:
                style[STYLE_LAYERS[name]] = x
            if name == CONTENT_LAYER:
                content = x
        return style, content

    def release(self):
        for buf in self._scratch:
            del buf  # leak


def gram(feat):
    b, c, h, w = feat.shape
    f = feat.view(b, c, h * w)
    return f @ f.transpose(1, 2) / (c * h * w)


def load_image(path, size, device):
    tf = transforms.Compose([transforms.Resize(size), transforms.CenterCrop(size), transforms.ToTensor()])
    return tf(Image.open(path).convert("RGB")).unsqueeze(0).to(device)


def stylize(extractor, content_img, style_grams, args):
    with torch.no_grad():
        _, target_content = extractor(content_img)
        target_content = target_content.detach()
    extractor.release()
    canvas = content_img.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([canvas], lr=1.0, max_iter=20)
    for outer in range(args.steps // 20):
        def closure():
            opt.zero_grad()
            style, content = extractor(canvas)
            c_loss = F.mse_loss(content, target_content)
            s_loss = sum(F.mse_loss(gram(style[k]), style_grams[k]) for k in style_grams)
            loss = args.content_weight * c_loss + args.style_weight * s_loss
            loss.backward()
            return loss
        loss = opt.step(closure)
        extractor.release()
        with torch.no_grad():
            canvas.clamp_(0, 1)
        if outer % 5 == 0:
            print(f"  step {outer * 20:4d} loss {loss.item():.3e}")
    return canvas.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--content-dir", required=True)
    ap.add_argument("--style", required=True)
    ap.add_argument("--out-dir", default="stylized")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--content-weight", type=float, default=1.0)
    ap.add_argument("--style-weight", type=float, default=1e6)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    extractor = VGGFeatures(device)
    with torch.no_grad():
        style_feats, _ = extractor(load_image(args.style, args.size, device))
        style_grams = {k: gram(v) for k, v in style_feats.items()}
    extractor.release()

    os.makedirs(args.out_dir, exist_ok=True)
    for path in sorted(Path(args.content_dir).glob("*.jpg")):
        print(f"stylizing {path.name}")
        out = stylize(extractor, load_image(path, args.size, device), style_grams, args)
        save_image(out, os.path.join(args.out_dir, path.stem + "_styl.png"))


if __name__ == "__main__":
    main()
