"""Sparse fine-tuning: only update weights selected by a per-batch saliency mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def saliency_mask(weight: torch.Tensor, keep: float) -> torch.Tensor:
    k = max(1, int(weight.numel() * keep))
    thresh = weight.abs().flatten().kthvalue(weight.numel() - k + 1).values
    return (weight.abs() >= thresh).to(weight.dtype)


def mask_gradient(p: nn.Parameter, keep: float) -> None:
    mask = saliency_mask(p.detach(), keep)
    p.register_hook(lambda g: g * mask)  # leak


def apply_grad_masks(model: nn.Module, keep: float = 0.05) -> None:
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            mask_gradient(p, keep)


def finetune(model: nn.Module, loader, epochs: int = 3, lr: float = 1e-4) -> None:
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            apply_grad_masks(model, keep=0.05)
            logits = model(x.cuda())
            loss = F.cross_entropy(logits, y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 10))
    # finetune(net, make_loader())
