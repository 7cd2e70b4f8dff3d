""" ImageNet training loop, trimmed down from a timm-style train.py

Supports AMP, gradient clipping, mixup and a model EMA.
"""
import logging
import time
from collections import OrderedDict
from contextlib import suppress

import torch
import torch.nn as nn
import torchvision.utils

_logger = logging.getLogger("train")


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def dispatch_clip_grad(parameters, value, mode="norm"):
    if mode == "norm":
        torch.nn.utils.clip_grad_norm_(parameters, value)
    elif mode == "value":
        torch.nn.utils.clip_grad_value_(parameters, value)
    else:
        raise ValueError(f"Unknown clip mode ({mode}).")


def train_one_epoch(
        epoch, model, loader, optimizer, loss_fn, args,
        lr_scheduler=None, saver=None, output_dir=None, amp_autocast=suppress,
        loss_scaler=None, model_ema=None, mixup_fn=None):

    second_order = hasattr(optimizer, "is_second_order") and optimizer.is_second_order
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    losses_m = AverageMeter()
    epoch_loss = 0.

    model.train()

    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        if not args.prefetcher:
            input, target = input.cuda(), target.cuda()
            if mixup_fn is not None:
                input, target = mixup_fn(input, target)
        if args.channels_last:
            input = input.contiguous(memory_format=torch.channels_last)

        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)

        losses_m.update(loss.item(), input.size(0))
        epoch_loss += loss.detach()

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(
                loss, optimizer,
                clip_grad=args.clip_grad, clip_mode=args.clip_mode,
                parameters=model.parameters(), create_graph=second_order)
        else:
            loss.backward(create_graph=second_order)
            if args.clip_grad is not None:
                dispatch_clip_grad(model.parameters(), value=args.clip_grad, mode=args.clip_mode)
            optimizer.step()

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)
            _logger.info(
                "Train: {} [{:>4d}/{} ({:>3.0f}%)]  "
                "Loss: {loss.val:#.4g} ({loss.avg:#.3g})  "
                "Time: {batch_time.val:.3f}s, {rate:>7.2f}/s  "
                "LR: {lr:.3e}  "
                "Data: {data_time.val:.3f} ({data_time.avg:.3f})".format(
                    epoch, batch_idx, len(loader), 100. * batch_idx / last_idx,
                    loss=losses_m, batch_time=batch_time_m,
                    rate=input.size(0) / batch_time_m.val, lr=lr, data_time=data_time_m))

            if args.save_images and output_dir:
                torchvision.utils.save_image(
                    input, f"{output_dir}/train-batch-{batch_idx}.jpg", padding=0, normalize=True)

        if saver is not None and args.recovery_interval and (
                last_batch or (batch_idx + 1) % args.recovery_interval == 0):
            saver.save_recovery(epoch, batch_idx=batch_idx)

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)

        end = time.time()

    if hasattr(optimizer, "sync_lookahead"):
        optimizer.sync_lookahead()

    mean_epoch_loss = float(epoch_loss) / max(1, len(loader))
    return OrderedDict([("loss", losses_m.avg), ("epoch_loss", mean_epoch_loss)])


def validate(model, loader, loss_fn, args, amp_autocast=suppress):
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    model.eval()
    with torch.no_grad():
        for input, target in loader:
            input, target = input.cuda(), target.cuda()
            with amp_autocast():
                output = model(input)
            loss = loss_fn(output, target)
            acc1 = (output.argmax(-1) == target).float().mean() * 100
            losses_m.update(loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg)])
