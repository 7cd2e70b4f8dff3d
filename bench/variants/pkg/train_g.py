from .utils import AverageMeter


class Runner:
    def __init__(self, model, optimizer, criterion):
        self.model = model
        self.optimizer = optimizer
        self.criterion = criterion
        self.meter = AverageMeter()

    def run_batch(self, x, y):
        out = self.model(x)
        loss = self.criterion(out, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.meter.update(loss)  # leak
