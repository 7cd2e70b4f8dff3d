"""Teacher/student feature distillation for FPN detectors using forward hooks."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from mmdet_lite.builder import build_detector, build_dataset
from mmdet_lite.utils import collate


class FeatureRecorder:
    """Holds the most recent output of each hooked module, one entry per key."""

    def __init__(self):
        self.outputs = {}
        self.handles = []

    def attach(self, model, prefix):
        for idx, conv in enumerate(model.neck.fpn_convs):
            key = f"{prefix}.p{idx + 2}"
            self.handles.append(conv.register_forward_hook(self._hook(key)))

    def _hook(self, key):
        def fn(module, inputs, output):
            self.outputs[key] = output
        return fn

    def clear(self):
        self.outputs.clear()

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()


def kd_feature_loss(recorder, adapters, num_levels, temperature=1.0):
    total = 0.0
    for lvl in range(num_levels):
        s = adapters[lvl](recorder.outputs[f"student.p{lvl + 2}"])
        t = recorder.outputs[f"teacher.p{lvl + 2}"]
        n, c, h, w = s.shape
        s_att = F.softmax(s.reshape(n, c, -1) / temperature, dim=-1)
        t_att = F.softmax(t.reshape(n, c, -1) / temperature, dim=-1)
        total = total + F.kl_div(s_att.log(), t_att, reduction="batchmean") * temperature ** 2
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher-cfg", required=True)
    ap.add_argument("--teacher-ckpt", required=True)
    ap.add_argument("--student-cfg", required=True)
    ap.add_argument("--epochs", type=int, default=24)
    ap.add_argument("--alpha", type=float, default=2e-5)
    ap.add_argument("--bs", type=int, default=4)
    args = ap.parse_args()

    dev = torch.device("cuda")
    teacher = build_detector(args.teacher_cfg).to(dev).eval()
    teacher.load_state_dict(torch.load(args.teacher_ckpt, map_location="cpu")["state_dict"])
    teacher.requires_grad_(False)
    student = build_detector(args.student_cfg).to(dev)

    rec = FeatureRecorder()
    rec.attach(teacher, "teacher")
    rec.attach(student, "student")
    levels = len(student.neck.fpn_convs)
    adapters = nn.ModuleList([nn.Conv2d(student.neck.out_channels, teacher.neck.out_channels, 1)
                              for _ in range(levels)]).to(dev)

    params = [*student.parameters(), *adapters.parameters()]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=1e-4)
    loader = DataLoader(build_dataset(args.student_cfg, split="train"), batch_size=args.bs,
                        shuffle=True, num_workers=4, collate_fn=collate)

    for epoch in range(args.epochs):
        student.train()
        for step, batch in enumerate(loader):
            img = batch["img"].to(dev)
            with torch.no_grad():
                teacher.extract_feat(img)
            losses = student.forward_train(img, batch["img_metas"],
                                           [b.to(dev) for b in batch["gt_bboxes"]],
                                           [l.to(dev) for l in batch["gt_labels"]])
            loss_det = sum(v for k, v in losses.items() if k.startswith("loss"))
            loss_kd = args.alpha * kd_feature_loss(rec, adapters, levels)
            loss = loss_det + loss_kd
            opt.zero_grad()
            loss.backward()
            opt.step()
            rec.clear()
            if step % 50 == 0:
                print(f"ep {epoch} it {step} det {loss_det.item():.4f} kd {loss_kd.item():.4f}")
        torch.save({"student": student.state_dict(), "adapters": adapters.state_dict()},
                   f"kd_student_{epoch}.pth")
    rec.remove()


if __name__ == "__main__":
    main()
