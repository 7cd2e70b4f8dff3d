import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DUMP_FEATURES = os.environ.get("DUMP_GLOBAL_FEATURES", "0") == "1"
_GLOBAL_FEATURES = []


class PointNetEncoder(nn.Module):
    def __init__(self, in_dim=3, feat_dim=1024):
        super().__init__()
        self.conv1 = nn.Conv1d(in_dim, 64, 1)
        self.conv2 = nn.Conv1d(64, 128, 1)
        self.conv3 = nn.Conv1d(128, feat_dim, 1)
        self.bn1 = nn.BatchNorm1d(64)
        self.bn2 = nn.BatchNorm1d(128)
        self.bn3 = nn.BatchNorm1d(feat_dim)

    def forward(self, points):
        x = points.transpose(1, 2)
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.bn3(self.conv3(x))
        global_feat = torch.max(x, dim=2)[0]
        if DUMP_FEATURES:
            _GLOBAL_FEATURES.append(global_feat.detach())
        return global_feat


def flush_features(out_dir, tag):
    if not _GLOBAL_FEATURES:
        return
    torch.save(torch.cat(_GLOBAL_FEATURES).cpu(), os.path.join(out_dir, f"global_{tag}.pt"))
    _GLOBAL_FEATURES.clear()


class PointNetCls(nn.Module):
    def __init__(self, num_classes=40):
        super().__init__()
        self.encoder = PointNetEncoder()
        self.head = nn.Sequential(
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, num_classes),
        )

    def forward(self, points):
        return self.head(self.encoder(points))


def train(model, loader, epochs=200, device="cuda", dump_dir="features"):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.7)
    for epoch in range(epochs):
        model.train()
        correct = total = 0
        for step, (points, labels) in enumerate(loader):
            points, labels = points.to(device), labels.to(device)
            logits = model(points)
            loss = F.cross_entropy(logits, labels, label_smoothing=0.2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            flush_features(dump_dir, f"{epoch:03d}_{step:05d}")
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
        scheduler.step()
        print(f"epoch {epoch}: train acc {correct / total:.4f}")
