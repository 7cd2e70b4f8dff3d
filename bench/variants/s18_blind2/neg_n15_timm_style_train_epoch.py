#!/usr/bin/env python3
""" ImageNet training script (trimmed timm-style train.py for internal ablations). """
import argparse
import logging
import os
import time
from collections import OrderedDict
from contextlib import suppress

import torch
import torch.distributed as dist
import torch.nn as nn
from timm.data import create_dataset, create_loader, resolve_data_config
from timm.loss import LabelSmoothingCrossEntropy
from timm.models import create_model
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2
from timm.utils import AverageMeter, accuracy

_logger = logging.getLogger('train')


def reduce_tensor(tensor, n):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= n
    return rt


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None, amp_autocast=suppress,
                    loss_scaler=None):
    batch_time_m = AverageMeter()
    model.train()
    end = time.time()
    num_updates = epoch * len(loader)
    epoch_loss_sum = torch.zeros((), device=args.device)
    last_idx = len(loader) - 1
    for batch_idx, (input, target) in enumerate(loader):
        input, target = input.to(args.device), target.to(args.device)
        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler.scale(loss).backward()
            loss_scaler.step(optimizer)
            loss_scaler.update()
        else:
            loss.backward()
            optimizer.step()

        reduced_loss = reduce_tensor(loss.detach(), args.world_size) if args.distributed else loss.detach()
        epoch_loss_sum += reduced_loss
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if batch_idx == last_idx or batch_idx % args.log_interval == 0:
            lr = optimizer.param_groups[0]['lr']
            if args.rank == 0:
                _logger.info(f'Train: {epoch} [{batch_idx:>4d}/{len(loader)}] '
                             f'Loss: {reduced_loss.item():.4f} Time: {batch_time_m.avg:.3f}s LR: {lr:.3e}')
        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates)
        end = time.time()
    return OrderedDict([('loss', epoch_loss_sum.item() / len(loader))])


@torch.no_grad()
def validate(model, loader, loss_fn, args):
    losses_m, top1_m, top5_m = AverageMeter(), AverageMeter(), AverageMeter()
    model.eval()
    for input, target in loader:
        input, target = input.to(args.device), target.to(args.device)
        output = model(input)
        loss = loss_fn(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        if args.distributed:
            loss, acc1, acc5 = (reduce_tensor(t, args.world_size) for t in (loss, acc1, acc5))
        losses_m.update(loss.item(), input.size(0))
        top1_m.update(acc1.item(), input.size(0))
        top5_m.update(acc5.item(), input.size(0))
    return OrderedDict([('loss', losses_m.avg), ('top1', top1_m.avg), ('top5', top5_m.avg)])


def main():
    parser = argparse.ArgumentParser(description='ImageNet training')
    parser.add_argument('data_dir')
    parser.add_argument('--model', default='resnet50')
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--opt', default='sgd')
    parser.add_argument('--smoothing', type=float, default=0.1)
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--log-interval', type=int, default=50)
    parser.add_argument('--amp', action='store_true')
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    args.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    args.rank, args.world_size = 0, 1
    if args.distributed:
        dist.init_process_group('nccl')
        args.rank, args.world_size = dist.get_rank(), dist.get_world_size()
        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))
    args.device = torch.device('cuda')

    model = create_model(args.model, num_classes=1000).to(args.device)
    if args.distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    data_config = resolve_data_config(vars(args), model=model)
    ds_train = create_dataset('', root=args.data_dir, split='train', is_training=True)
    ds_eval = create_dataset('', root=args.data_dir, split='validation')
    loader_train = create_loader(ds_train, input_size=data_config['input_size'], batch_size=args.batch_size,
                                 is_training=True, num_workers=args.workers, distributed=args.distributed)
    loader_eval = create_loader(ds_eval, input_size=data_config['input_size'], batch_size=args.batch_size,
                                is_training=False, num_workers=args.workers, distributed=args.distributed)

    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr, weight_decay=5e-5)
    lr_scheduler, num_epochs = create_scheduler_v2(optimizer, sched='cosine', num_epochs=args.epochs,
                                                   updates_per_epoch=len(loader_train))
    loss_scaler = torch.cuda.amp.GradScaler() if args.amp else None
    amp_autocast = (lambda: torch.autocast('cuda', dtype=torch.float16)) if args.amp else suppress
    train_loss_fn = LabelSmoothingCrossEntropy(args.smoothing).to(args.device)
    val_loss_fn = nn.CrossEntropyLoss().to(args.device)

    for epoch in range(num_epochs):
        train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, args,
                                        lr_scheduler=lr_scheduler, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
        eval_metrics = validate(model, loader_eval, val_loss_fn, args)
        lr_scheduler.step(epoch + 1, eval_metrics['top1'])
        if args.rank == 0:
            _logger.info(f'epoch {epoch} train {train_metrics} eval {eval_metrics}')


if __name__ == '__main__':
    main()
