"""Gaussian-weighted sliding-window predictor (nnU-Net style)."""
import argparse
import itertools
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def importance_map(patch_size, sigma_scale=1.0 / 8, device=None):
    axes = [torch.linspace(-(s - 1) / 2.0, (s - 1) / 2.0, s, device=device) for s in patch_size]
    zz, yy, xx = torch.meshgrid(*axes, indexing="ij")
    sig = [s * sigma_scale for s in patch_size]
    g = torch.exp(-(zz ** 2 / (2 * sig[0] ** 2) + yy ** 2 / (2 * sig[1] ** 2)
                    + xx ** 2 / (2 * sig[2] ** 2)))
    g = g / g.max()
    g[g == 0] = g[g > 0].min()
    return g


def window_starts(size, patch, step_frac):
    if size <= patch:
        return [0]
    stride = patch * step_frac
    n = int(math.ceil((size - patch) / stride)) + 1
    actual = (size - patch) / max(n - 1, 1)
    return [int(round(actual * i)) for i in range(n)]


class Predictor3D:
    def __init__(self, network, patch_size, num_classes, step_frac=0.5,
                 device="cuda", use_mirroring=False):
        self.network = network.to(device).eval()
        self.patch_size = tuple(patch_size)
        self.num_classes = num_classes
        self.step_frac = step_frac
        self.device = torch.device(device)
        self.use_mirroring = use_mirroring
        self.gaussian = importance_map(self.patch_size, device=self.device)

    def _forward_patch(self, patch):
        out = torch.softmax(self.network(patch), dim=1)
        if self.use_mirroring:
            for axes in ((2,), (3,), (4,)):
                out += torch.softmax(self.network(patch.flip(axes)), dim=1).flip(axes)
            out /= 4.0
        return out

    @torch.no_grad()
    def predict(self, volume):
        """volume: np.ndarray (C, D, H, W)."""
        x = torch.from_numpy(np.ascontiguousarray(volume)).float()[None].to(self.device)
        pad = []
        for dim, p in zip(reversed(x.shape[2:]), reversed(self.patch_size)):
            diff = max(p - dim, 0)
            pad += [diff // 2, diff - diff // 2]
        x = F.pad(x, pad)
        shape = x.shape[2:]

        agg = torch.zeros((self.num_classes,) + tuple(shape), device=self.device, dtype=torch.half)
        norm = torch.zeros(tuple(shape), device=self.device, dtype=torch.half)
        starts = [window_starts(s, p, self.step_frac) for s, p in zip(shape, self.patch_size)]
        pz, py, px = self.patch_size

        for z, y, w in itertools.product(*starts):
            patch = x[:, :, z:z + pz, y:y + py, w:w + px]
            pred = self._forward_patch(patch)[0]
            agg[:, z:z + pz, y:y + py, w:w + px] += (pred * self.gaussian).half()
            norm[z:z + pz, y:y + py, w:w + px] += self.gaussian.half()

        agg /= norm
        agg = agg[:, pad[4]:shape[0] - pad[5], pad[2]:shape[1] - pad[3], pad[0]:shape[2] - pad[1]]
        return agg.argmax(0).cpu().numpy().astype(np.uint8)


class PlainConvNet(nn.Module):
    def __init__(self, in_ch, num_classes, width=24):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv3d(in_ch, width, 3, padding=1), nn.InstanceNorm3d(width), nn.LeakyReLU(inplace=True),
            nn.Conv3d(width, width, 3, padding=2, dilation=2), nn.InstanceNorm3d(width),
            nn.LeakyReLU(inplace=True),
            nn.Conv3d(width, width, 3, padding=1), nn.InstanceNorm3d(width), nn.LeakyReLU(inplace=True),
        )
        self.seg = nn.Conv3d(width, num_classes, 1)

    def forward(self, x):
        return self.seg(self.body(x))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--weights", required=True)
    p.add_argument("--patch-size", type=int, nargs=3, default=(128, 128, 128))
    p.add_argument("--step", type=float, default=0.5)
    p.add_argument("--classes", type=int, default=2)
    p.add_argument("--tta", action="store_true")
    return p.parse_args()


if __name__ == "__main__":
    args = parse_args()
    model = PlainConvNet(1, args.classes)
    model.load_state_dict(torch.load(args.weights, map_location="cpu"))
    predictor = Predictor3D(model, args.patch_size, args.classes, args.step, use_mirroring=args.tta)
    for f in args.inputs:
        img = np.load(f)[None].astype(np.float32)
        seg = predictor.predict(img)
        np.save(f.replace(".npy", "_pred.npy"), seg)
        print(f, seg.shape, np.bincount(seg.ravel(), minlength=args.classes))
