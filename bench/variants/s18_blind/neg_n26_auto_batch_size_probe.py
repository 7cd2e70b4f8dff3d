"""Find the largest batch size that fits for training *and* for inference.

Used by our launch scripts before starting a sweep, so that every config runs
with the biggest power-of-two batch that does not OOM on the target GPU.

    python p26_auto_batch_size_probe.py --arch convnext_base --img 384
"""
import argparse
import gc
import json
import logging
import time

import torch
import torch.nn as nn

logger = logging.getLogger("bs_probe")


def is_oom(exc: BaseException) -> bool:
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    msg = str(exc)
    return isinstance(exc, RuntimeError) and (
        "CUDA out of memory" in msg or "CUBLAS_STATUS_ALLOC_FAILED" in msg or "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED" in msg
    )


def release():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _trial(model, batch_size, img, train, n_iter=3, channels_last=True):
    x = torch.randn(batch_size, 3, img, img, device="cuda")
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch_size,), device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.0) if train else None
    t0 = time.perf_counter()
    for _ in range(n_iter):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            if train:
                out = model(x)
                loss = nn.functional.cross_entropy(out, y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
            else:
                with torch.no_grad():
                    model(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n_iter


def probe(model, batch_size, img, train, floor=1):
    """Halve ``batch_size`` until a trial passes; returns (bs, sec/iter)."""
    while True:
        oom = False
        try:
            dt = _trial(model, batch_size, img, train)
        except RuntimeError as e:
            if not is_oom(e) or batch_size <= floor:
                raise
            oom = True
        if not oom:
            break
        logger.info("bs=%d OOM (%s), halving", batch_size, "train" if train else "infer")
        model.zero_grad(set_to_none=True)
        release()
        batch_size //= 2
    peak = torch.cuda.max_memory_allocated() / 2**30
    logger.info("bs=%d ok: %.3fs/iter, peak %.1f GiB", batch_size, dt, peak)
    return batch_size, dt


def build(arch, channels_last=True):
    import timm

    model = timm.create_model(arch, pretrained=False).cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="convnext_base")
    ap.add_argument("--img", type=int, default=224)
    ap.add_argument("--start", type=int, default=1024)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    model = build(args.arch)
    model.train()
    train_bs, train_dt = probe(model, args.start, args.img, train=True)
    release()
    model.eval()
    infer_bs, infer_dt = probe(model, args.start * 4, args.img, train=False)
    result = {
        "arch": args.arch, "img": args.img, "gpu": torch.cuda.get_device_name(),
        "train_bs": train_bs, "train_img_s": train_bs / train_dt,
        "infer_bs": infer_bs, "infer_img_s": infer_bs / infer_dt,
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f)


if __name__ == "__main__":
    main()
