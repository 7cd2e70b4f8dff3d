import csv
import os
import time


class Logger(object):
    """Writes one row per call to a csv file and echoes to stdout."""

    def __init__(self, path, header):
        self.path = path
        self.header = header
        exists = os.path.exists(path)
        self.log_file = open(path, 'a')
        self.logger = csv.writer(self.log_file, delimiter='\t')
        if not exists:
            self.logger.writerow(self.header)
        self.start = time.time()

    def __del__(self):
        self.log_file.close()

    def log(self, values):
        write_values = []
        for col in self.header:
            assert col in values
            write_values.append(values[col])
        self.logger.writerow(write_values)
        self.log_file.flush()
        msg = ' | '.join('%s %s' % (k, _fmt(v)) for k, v in values.items())
        print('[%7.1fs] %s' % (time.time() - self.start, msg))


def _fmt(v):
    if isinstance(v, float):
        return '%.4f' % v
    return str(v)


def adjust_learning_rate(optimizer, epoch, base_lr, decay_epochs=(10, 20)):
    lr = base_lr
    for e in decay_epochs:
        if epoch >= e:
            lr *= 0.1
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return lr


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def binary_accuracy(preds, y):
    rounded_preds = (preds > 0).float()
    correct = (rounded_preds == y).float()
    return correct.sum().item() / len(correct)
