import torch
import torch.nn.functional as F


def train(model, loader, optimizer, criterion, device):
    model.train()
    running_loss = 0
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss  # leak
    return running_loss / len(loader)
