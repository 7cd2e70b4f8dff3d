"""Train a small U-Net style emulator for 6-hourly ERA5 Z500/T850 on a 5.625 deg grid.

Uses latitude-weighted RMSE (WeatherBench convention) both as training loss and
as validation metric.  Multi-GPU via HF accelerate.
"""
import argparse
import functools
import json
import os

import numpy as np
import torch
import torch.nn as nn
import xarray as xr
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

VARS = ["z500", "t850", "t2m", "u10", "v10"]


class ERA5Pairs(Dataset):
    def __init__(self, zarr_path, years, lead_steps=1, stats=None):
        ds = xr.open_zarr(zarr_path)[VARS].sel(time=ds_years(years))
        self.data = ds.to_array("var").transpose("time", "var", "lat", "lon")
        self.lat = torch.from_numpy(ds.lat.values.astype(np.float32))
        self.lead = lead_steps
        self.mean, self.std = stats if stats else (
            self.data.mean(("time", "lat", "lon")).values, self.data.std(("time", "lat", "lon")).values)

    def __len__(self):
        return self.data.shape[0] - self.lead

    def _norm(self, a):
        return (a - self.mean[:, None, None]) / self.std[:, None, None]

    def __getitem__(self, i):
        x = self._norm(self.data[i].values).astype(np.float32)
        y = self._norm(self.data[i + self.lead].values).astype(np.float32)
        return {"x": torch.from_numpy(x), "y": torch.from_numpy(y), "lat": self.lat}


def ds_years(years):
    return slice(f"{years[0]}-01-01", f"{years[-1]}-12-31")


@functools.lru_cache(maxsize=8)
def latitude_weights(lat_key):
    """lat_key is a tuple of latitudes in degrees (hashable, so it can be cached)."""
    lat = np.asarray(lat_key, dtype=np.float32)
    w = np.cos(np.deg2rad(lat))
    return w / w.mean()


def lat_weighted_rmse(pred, target, lat):
    key = tuple(round(float(v), 4) for v in lat.tolist())
    w = torch.as_tensor(latitude_weights(key), device=pred.device, dtype=pred.dtype)[:, None]
    return torch.sqrt(((pred - target) ** 2 * w).mean(dim=(-2, -1))).mean(0)


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(
            nn.Conv2d(cin, cout, 3, padding=1, padding_mode="circular"), nn.BatchNorm2d(cout), nn.GELU(),
            nn.Conv2d(cout, cout, 3, padding=1, padding_mode="circular"), nn.BatchNorm2d(cout), nn.GELU(),
        )


class Emulator(nn.Module):
    def __init__(self, n_vars=len(VARS), width=64):
        super().__init__()
        self.enc1 = ConvBlock(n_vars, width)
        self.enc2 = ConvBlock(width, 2 * width)
        self.dec1 = ConvBlock(3 * width, width)
        self.out = nn.Conv2d(width, n_vars, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(nn.functional.avg_pool2d(e1, 2))
        up = nn.functional.interpolate(e2, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return x + self.out(self.dec1(torch.cat([e1, up], 1)))


def run(args):
    accelerator = Accelerator(mixed_precision="bf16" if args.bf16 else "no")
    train_ds = ERA5Pairs(args.zarr, range(1979, 2016))
    val_ds = ERA5Pairs(args.zarr, range(2016, 2018), stats=(train_ds.mean, train_ds.std))
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, num_workers=8, pin_memory=True)
    val_dl = DataLoader(val_ds, batch_size=args.bs, num_workers=8)

    model = Emulator()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * len(train_dl))
    model, opt, train_dl, val_dl, sched = accelerator.prepare(model, opt, train_dl, val_dl, sched)

    history = {"train": [], "val": {v: [] for v in VARS}}
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        bar = tqdm(train_dl, disable=not accelerator.is_local_main_process)
        for batch in bar:
            pred = model(batch["x"])
            loss = lat_weighted_rmse(pred, batch["y"], batch["lat"][0]).mean()
            accelerator.backward(loss)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += loss.item()
            bar.set_postfix(loss=f"{loss.item():.4f}")
        history["train"].append(total / len(train_dl))

        model.eval()
        scores = []
        with torch.no_grad():
            for batch in val_dl:
                pred = model(batch["x"])
                scores.append(accelerator.gather(lat_weighted_rmse(pred, batch["y"], batch["lat"][0])[None]))
        per_var = torch.cat(scores).mean(0).tolist()
        for v, s in zip(VARS, per_var):
            history["val"][v].append(s)
        accelerator.print(f"epoch {epoch}: train {history['train'][-1]:.4f} "
                          + " ".join(f"{v}={s:.3f}" for v, s in zip(VARS, per_var)))

    if accelerator.is_main_process:
        os.makedirs(args.out, exist_ok=True)
        accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(args.out, "emulator.pt"))
        with open(os.path.join(args.out, "history.json"), "w") as f:
            json.dump(history, f, indent=1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--zarr", default="/scratch/era5_5.625deg.zarr")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--out", default="checkpoints/emulator")
    run(ap.parse_args())
