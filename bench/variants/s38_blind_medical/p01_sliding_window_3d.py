"""Patch-based sliding-window prediction for 3-D CT/MR volumes."""
import argparse
import itertools
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian_importance_map(patch_size, sigma_scale=0.125, device="cpu"):
    coords = [torch.arange(s, dtype=torch.float32, device=device) - (s - 1) / 2.0
              for s in patch_size]
    grids = torch.meshgrid(*coords, indexing="ij")
    acc = torch.zeros(patch_size, device=device)
    for grid, size in zip(grids, patch_size):
        sigma = size * sigma_scale
        acc = acc + grid ** 2 / (2.0 * sigma ** 2)
    imp = torch.exp(-acc)
    imp = imp / imp.max()
    return imp.clamp_min(1e-3)


def compute_steps(image_size, patch_size, overlap):
    steps = []
    for dim, p in zip(image_size, patch_size):
        stride = max(1, int(p * (1.0 - overlap)))
        n = max(1, math.ceil((dim - p) / stride) + 1)
        last = max(dim - p, 0)
        if n == 1:
            steps.append([0])
        else:
            steps.append([int(round(i * last / (n - 1))) for i in range(n)])
    return steps


class SlidingWindowPredictor:
    def __init__(self, network, patch_size=(96, 96, 96), num_classes=3,
                 overlap=0.5, device="cuda"):
        self.network = network
        self.patch_size = tuple(patch_size)
        self.num_classes = num_classes
        self.overlap = overlap
        self.device = torch.device(device)
        self.importance = gaussian_importance_map(self.patch_size, device=self.device)

    def _pad(self, x):
        pads = []
        for dim, p in zip(reversed(x.shape[-3:]), reversed(self.patch_size)):
            diff = max(p - dim, 0)
            pads += [diff // 2, diff - diff // 2]
        return F.pad(x, pads, mode="constant", value=0.0), pads

    def predict_volume(self, volume):
        """volume: (C, D, H, W) float tensor. Returns a (D, H, W) label map."""
        self.network.eval()
        x, pads = self._pad(volume.unsqueeze(0).to(self.device, non_blocking=True))
        spatial = tuple(x.shape[-3:])
        logits = torch.zeros((1, self.num_classes) + spatial, device=self.device)
        weights = torch.zeros((1, 1) + spatial, device=self.device)

        for z, y, w in itertools.product(*compute_steps(spatial, self.patch_size, self.overlap)):
            sl = (slice(None), slice(None),
                  slice(z, z + self.patch_size[0]),
                  slice(y, y + self.patch_size[1]),
                  slice(w, w + self.patch_size[2]))
            pred = F.softmax(self.network(x[sl]), dim=1)
            logits[sl] += pred * self.importance  # leak
            weights[sl] += self.importance

        logits = logits / weights
        d0, d1 = pads[4], spatial[0] - pads[5]
        h0, h1 = pads[2], spatial[1] - pads[3]
        w0, w1 = pads[0], spatial[2] - pads[1]
        logits = logits[:, :, d0:d1, h0:h1, w0:w1]
        return logits.argmax(dim=1)[0].to(torch.uint8).cpu().numpy()


class ConvBlock3d(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(
            nn.Conv3d(cin, cout, 3, padding=1, bias=False),
            nn.InstanceNorm3d(cout, affine=True),
            nn.LeakyReLU(0.01, inplace=True),
        )


class SmallUNet3d(nn.Module):
    def __init__(self, in_ch=1, num_classes=3, base=16):
        super().__init__()
        self.enc1 = ConvBlock3d(in_ch, base)
        self.enc2 = ConvBlock3d(base, base * 2)
        self.bottleneck = ConvBlock3d(base * 2, base * 4)
        self.up2 = nn.ConvTranspose3d(base * 4, base * 2, 2, stride=2)
        self.dec2 = ConvBlock3d(base * 4, base * 2)
        self.up1 = nn.ConvTranspose3d(base * 2, base, 2, stride=2)
        self.dec1 = ConvBlock3d(base * 2, base)
        self.head = nn.Conv3d(base, num_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool3d(e1, 2))
        b = self.bottleneck(F.max_pool3d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


def main():
    parser = argparse.ArgumentParser(description="Sliding-window inference on .npy volumes")
    parser.add_argument("volumes", nargs="+")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--patch", type=int, nargs=3, default=[96, 96, 96])
    parser.add_argument("--overlap", type=float, default=0.5)
    parser.add_argument("--num-classes", type=int, default=3)
    args = parser.parse_args()

    net = SmallUNet3d(num_classes=args.num_classes)
    state = torch.load(args.checkpoint, map_location="cpu")
    net.load_state_dict(state.get("state_dict", state))
    net.cuda()
    predictor = SlidingWindowPredictor(net, args.patch, args.num_classes, args.overlap)

    for path in args.volumes:
        vol = np.load(path).astype(np.float32)
        vol = (vol - vol.mean()) / (vol.std() + 1e-8)
        seg = predictor.predict_volume(torch.from_numpy(vol)[None])
        out_path = path.replace(".npy", "_seg.npy")
        np.save(out_path, seg)
        print(f"{path}: labels {np.unique(seg).tolist()} -> {out_path}")


if __name__ == "__main__":
    main()
