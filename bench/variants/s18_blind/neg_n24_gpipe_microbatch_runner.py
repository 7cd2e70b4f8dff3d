"""Two-stage GPipe-style pipeline for a model that does not fit on one GPU.

The model is split into ``stage0`` (cuda:0) and ``stage1`` (cuda:1). A batch
is cut into ``chunks`` micro-batches; all forwards run first, then all
backwards (fill-drain schedule).
"""
import argparse
import logging
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("pipe")


def split_sequential(model: nn.Sequential, balance: List[int]):
    assert sum(balance) == len(model), "balance must cover all layers"
    layers = list(model.children())
    return nn.Sequential(*layers[: balance[0]]), nn.Sequential(*layers[balance[0]:])


class FillDrainPipeline:
    def __init__(self, model: nn.Sequential, balance, chunks=8, devices=("cuda:0", "cuda:1")):
        s0, s1 = split_sequential(model, balance)
        self.devices = devices
        self.stage0 = s0.to(devices[0])
        self.stage1 = s1.to(devices[1])
        self.chunks = chunks
        self.boundary_in: Dict[int, torch.Tensor] = {}
        self.boundary_out: Dict[int, torch.Tensor] = {}
        self.losses: Dict[int, torch.Tensor] = {}

    def parameters(self):
        yield from self.stage0.parameters()
        yield from self.stage1.parameters()

    def _forward_all(self, x, y):
        for mb, (xc, yc) in enumerate(zip(x.chunk(self.chunks), y.chunk(self.chunks))):
            h = self.stage0(xc.to(self.devices[0], non_blocking=True))
            self.boundary_out[mb] = h
            h1 = h.detach().to(self.devices[1]).requires_grad_(True)
            self.boundary_in[mb] = h1
            logits = self.stage1(h1)
            self.losses[mb] = F.cross_entropy(logits, yc.to(self.devices[1])) / self.chunks

    def _backward_all(self):
        for mb in reversed(range(len(self.losses))):
            self.losses[mb].backward()
            grad = self.boundary_in[mb].grad.to(self.devices[0])
            self.boundary_out[mb].backward(grad)

    def _free_buffers(self):
        for buf in (self.boundary_in, self.boundary_out, self.losses):
            buf.clear()

    def train_step(self, x, y, optimizer):
        optimizer.zero_grad(set_to_none=True)
        self._forward_all(x, y)
        loss_val = sum(l.item() for l in self.losses.values())
        self._backward_all()
        optimizer.step()
        self._free_buffers()
        return loss_val

    @torch.no_grad()
    def predict(self, x):
        outs = []
        for xc in x.chunk(self.chunks):
            h = self.stage0(xc.to(self.devices[0]))
            outs.append(self.stage1(h.to(self.devices[1])).argmax(-1).cpu())
        return torch.cat(outs)


def make_mlp_tower(d_in, width, depth, n_classes):
    layers = [nn.Linear(d_in, width), nn.GELU()]
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    layers.append(nn.Linear(width, n_classes))
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=16384)
    ap.add_argument("--depth", type=int, default=24)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--bs", type=int, default=512)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    model = make_mlp_tower(1024, args.width, args.depth, 1000)
    n = len(model)
    pipe = FillDrainPipeline(model, balance=[n // 2, n - n // 2], chunks=args.chunks)
    opt = torch.optim.AdamW(pipe.parameters(), lr=1e-4)
    for step in range(args.steps):
        x = torch.randn(args.bs, 1024)
        y = torch.randint(0, 1000, (args.bs,))
        loss = pipe.train_step(x, y, opt)
        if step % 50 == 0:
            log.info("step %d loss %.4f mem0 %.1fG mem1 %.1fG", step, loss,
                     torch.cuda.memory_allocated(0) / 2**30, torch.cuda.memory_allocated(1) / 2**30)


if __name__ == "__main__":
    main()
