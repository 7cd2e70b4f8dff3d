import torch


def dice_loss(pred, target):
    inter = (pred * target).sum()
    return 1 - 2 * inter / (pred.sum() + target.sum())
