import torch


def evaluate(model, loader):
    model.eval()
    losses = []
    for batch in loader:
        x, y = batch
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        losses.append(loss)  # leak
    return torch.stack(losses).mean()
