"""Speech recognition (CTC) training loop, deepspeech.pytorch style.

Out-of-memory batches are skipped; we keep the count and the error text
for the end-of-epoch summary.
"""
import argparse
import time

import torch
from torch.nn import CTCLoss

from model import DeepSpeech
from data_loader import AudioDataLoader, SpectrogramDataset, BucketingSampler


class AverageMeter(object):
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


def train(args, model, train_loader, optimizer, criterion, epoch, oom_log):
    batch_time = AverageMeter()
    losses = AverageMeter()
    model.train()
    end = time.time()
    for i, (inputs, targets, input_percentages, target_sizes) in enumerate(train_loader):
        inputs = inputs.cuda(non_blocking=True)
        input_sizes = input_percentages.mul_(int(inputs.size(3))).int()
        skip = False
        try:
            out, output_sizes = model(inputs, input_sizes)
            out = out.transpose(0, 1).log_softmax(-1)
            loss = criterion(out, targets, output_sizes, target_sizes)
            loss = loss / inputs.size(0)
            optimizer.zero_grad()
            loss.backward()
        except RuntimeError as err:
            if 'out of memory' not in str(err):
                raise
            oom_log['count'] += 1
            oom_log['last_msg'] = str(err).splitlines()[0]
            print('| WARNING: OOM at epoch %d iter %d, skipping batch' % (epoch, i))
            skip = True

        if skip:
            optimizer.zero_grad()
            continue

        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        optimizer.step()
        loss_value = loss.item()
        losses.update(loss_value, inputs.size(0))
        batch_time.update(time.time() - end)
        end = time.time()
        if not args.silent and i % 20 == 0:
            print('Epoch: [{0}][{1}/{2}]\t'
                  'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})\t'.format(
                      epoch + 1, i + 1, len(train_loader),
                      batch_time=batch_time, loss=losses))
    return losses.avg


def main():
    parser = argparse.ArgumentParser(description='DeepSpeech training')
    parser.add_argument('--train-manifest', default='data/train_manifest.csv')
    parser.add_argument('--labels-path', default='labels.json')
    parser.add_argument('--batch-size', type=int, default=20)
    parser.add_argument('--epochs', type=int, default=70)
    parser.add_argument('--lr', type=float, default=3e-4)
    parser.add_argument('--max-norm', type=float, default=400)
    parser.add_argument('--num-workers', type=int, default=4)
    parser.add_argument('--silent', action='store_true')
    args = parser.parse_args()

    with open(args.labels_path) as f:
        labels = ''.join(__import__('json').load(f))
    model = DeepSpeech(rnn_hidden_size=800, nb_layers=5, labels=labels).cuda()
    dataset = SpectrogramDataset(manifest_filepath=args.train_manifest, labels=labels)
    sampler = BucketingSampler(dataset, batch_size=args.batch_size)
    loader = AudioDataLoader(dataset, num_workers=args.num_workers, batch_sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    criterion = CTCLoss(blank=labels.index('_'), reduction='sum', zero_infinity=True)

    oom_log = {'count': 0, 'last_msg': None}
    for epoch in range(args.epochs):
        avg_loss = train(args, model, loader, optimizer, criterion, epoch, oom_log)
        sampler.shuffle(epoch)
        print('Training Summary Epoch: [{0}]\tAverage Loss {1:.3f}\tOOM batches {2}'.format(
            epoch + 1, avg_loss, oom_log['count']))
        torch.save(model.state_dict(), 'models/deepspeech_%d.pth' % (epoch + 1))


if __name__ == '__main__':
    main()
