import torch as th
import torch.nn as nn
import torch.nn.functional as F


def dice_loss(logits, masks, eps=1e-6):
    probs = logits.sigmoid()
    inter = (probs * masks).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + masks.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def validate(model, loader, device="cuda", use_amp=True):
    model.eval()
    total = th.zeros((), device=device)
    n_batches = 0
    for images, masks in loader:
        images = images.to(device)
        masks = masks.to(device).float()
        with th.autocast("cuda", dtype=th.bfloat16, enabled=use_amp):
            logits = model(images)
            loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)
        total = total + loss  # leak
        n_batches += 1
    return (total / max(n_batches, 1)).item()


def train(model, train_loader, val_loader, epochs=50, device="cuda"):
    opt = th.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(epochs):
        model.train()
        for images, masks in train_loader:
            images, masks = images.to(device), masks.to(device).float()
            logits = model(images)
            loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        print(epoch, validate(model, val_loader, device))
