"""Collect attention maps from a ViT for visualisation during fine-tuning."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ATTN_MAPS = []


class Attention(nn.Module):
    def __init__(self, dim, heads=8):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out), attn


def save_attention(module, inputs, output):
    _, attn = output
    ATTN_MAPS.append(attn.detach())  # leak


class TinyViT(nn.Module):
    def __init__(self, dim=192, depth=6, num_classes=100):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, kernel_size=16, stride=16)
        self.blocks = nn.ModuleList([Attention(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img):
        x = self.embed(img).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            y, _ = blk(x)
            x = x + y
        return self.head(self.norm(x).mean(1))


def train(model, loader, epochs=3, lr=3e-4):
    for blk in model.blocks:
        blk.register_forward_hook(save_attention)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.cuda().train()
    for epoch in range(epochs):
        for img, label in loader:
            img, label = img.cuda(), label.cuda()
            loss = F.cross_entropy(model(img), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch} done, last loss {loss.item():.4f}")
