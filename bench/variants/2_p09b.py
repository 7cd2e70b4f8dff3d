import torch


def predict(model, loader):
    model.eval()
    predictions = torch.zeros(0)
    for x, _ in loader:
        out = model(x)
        predictions = torch.cat([predictions, out])  # leak
    return predictions
