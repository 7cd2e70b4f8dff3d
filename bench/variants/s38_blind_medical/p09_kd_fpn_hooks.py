"""Feature-imitation distillation for FPN detectors (teacher -> student)."""
import argparse
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from mmdet_lite.builder import build_detector, build_dataset
from mmdet_lite.utils import collate

_FEATURES = defaultdict(list)


def _make_hook(key):
    def hook(module, inputs, output):
        _FEATURES[key].append(output)  # leak
    return hook


def register_fpn_hooks(model, prefix):
    handles = []
    for idx, conv in enumerate(model.neck.fpn_convs):
        handles.append(conv.register_forward_hook(_make_hook(f"{prefix}.p{idx + 2}")))
    return handles


def latest(key):
    return _FEATURES[key][-1]


class FeatureAdapter(nn.Module):
    def __init__(self, s_ch, t_ch, levels):
        super().__init__()
        self.adapt = nn.ModuleList([nn.Conv2d(s_ch, t_ch, 1) for _ in range(levels)])

    def forward(self, idx, x):
        return self.adapt[idx](x)


def imitation_loss(adapter, num_levels, gt_mask=None):
    loss = 0.0
    for lvl in range(num_levels):
        s = adapter(lvl, latest(f"student.p{lvl + 2}"))
        t = latest(f"teacher.p{lvl + 2}")
        if gt_mask is not None:
            m = F.interpolate(gt_mask, size=s.shape[-2:], mode="nearest")
            loss = loss + ((s - t) ** 2 * m).sum() / m.sum().clamp_min(1.0) / s.size(1)
        else:
            loss = loss + F.mse_loss(s, t)
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher-cfg", default="configs/retinanet_r101_fpn.py")
    ap.add_argument("--teacher-ckpt", required=True)
    ap.add_argument("--student-cfg", default="configs/retinanet_r18_fpn.py")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--kd-weight", type=float, default=1.0)
    ap.add_argument("--samples-per-gpu", type=int, default=4)
    args = ap.parse_args()

    device = torch.device("cuda")
    teacher = build_detector(args.teacher_cfg).to(device).eval()
    teacher.load_state_dict(torch.load(args.teacher_ckpt, map_location="cpu")["state_dict"])
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = build_detector(args.student_cfg).to(device)

    register_fpn_hooks(teacher, "teacher")
    register_fpn_hooks(student, "student")
    num_levels = len(student.neck.fpn_convs)
    adapter = FeatureAdapter(student.neck.out_channels, teacher.neck.out_channels, num_levels).to(device)

    params = list(student.parameters()) + list(adapter.parameters())
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=1e-4)
    dataset = build_dataset(args.student_cfg, split="train")
    loader = DataLoader(dataset, batch_size=args.samples_per_gpu, shuffle=True,
                        num_workers=4, collate_fn=collate)

    for epoch in range(args.epochs):
        student.train()
        for i, batch in enumerate(loader):
            img = batch["img"].to(device)
            gt_bboxes = [b.to(device) for b in batch["gt_bboxes"]]
            gt_labels = [l.to(device) for l in batch["gt_labels"]]
            with torch.no_grad():
                teacher.extract_feat(img)
            losses = student.forward_train(img, batch["img_metas"], gt_bboxes, gt_labels)
            det_loss = sum(v for k, v in losses.items() if "loss" in k)
            kd_loss = imitation_loss(adapter, num_levels)
            loss = det_loss + args.kd_weight * kd_loss

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, 35.0)
            optimizer.step()
            if i % 50 == 0:
                print(f"[{epoch}][{i}/{len(loader)}] det {det_loss.item():.4f} kd {kd_loss.item():.4f}")
        torch.save(student.state_dict(), f"student_epoch_{epoch + 1}.pth")


if __name__ == "__main__":
    main()
