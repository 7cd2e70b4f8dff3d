from .utils import AverageMeter


def train(model, loader, optimizer, criterion):
    losses = AverageMeter()
    for i, (x, y) in enumerate(loader):
        out = model(x)
        loss = criterion(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss, x.size(0))  # leak
    return losses.avg
