import torch


def validate(model, val_loader, criterion, device):
    model.eval()
    val_loss = 0.0
    correct = 0
    for batch_idx, (data, target) in enumerate(val_loader):
        data, target = data.to(device), target.to(device)
        output = model(data)
        val_loss += criterion(output, target)  # leak
        pred = output.argmax(dim=1)
        correct += pred.eq(target).sum().item()
    return val_loss / len(val_loader), correct
