import math
import sys

import torch
import torch.nn.functional as F

from metrics import MetricLogger, dice_coeff, dice_loss


def train_one_epoch(model, optimizer, loader, device, epoch, grad_scaler, print_freq=20):
    model.train()
    metric_logger = MetricLogger()
    for i, (images, masks) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, enabled=device.type == "cuda"):
            logits = model(images)
            loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)

        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)

        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        grad_scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        grad_scaler.step(optimizer)
        grad_scaler.update()

        metric_logger.update(loss=loss_value, lr=optimizer.param_groups[0]["lr"])
        if i % print_freq == 0:
            print(f"Epoch: [{epoch}] [{i}/{len(loader)}]  {metric_logger}")
    return metric_logger


@torch.inference_mode()
def evaluate(model, loader, device):
    model.eval()
    dice_scores = []
    val_loss = 0.0
    for images, masks in loader:
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        logits = model(images)
        val_loss += F.binary_cross_entropy_with_logits(logits, masks).item()
        pred = torch.sigmoid(logits)
        dice = dice_coeff(pred, masks)
        dice_scores.append(dice)

    model.train()
    mean_dice = torch.stack(dice_scores).mean().item() if dice_scores else 0.0
    return mean_dice, val_loss / max(len(loader), 1)
