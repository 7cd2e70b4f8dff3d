import torch
import torch.nn as nn
import torch.nn.functional as F


def evaluate(model, val_loader, criterion, device="cuda"):
    model.eval()
    val_loss = 0.0
    correct = 0
    for x, y in val_loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        logits = model(x)
        val_loss += criterion(logits, y)  # leak
        correct += (logits.argmax(1) == y).sum().item()
    n = len(val_loader.dataset)
    return val_loss / len(val_loader), correct / n


def fit(model, train_loader, val_loader, epochs=30, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    best_acc = 0.0
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, val_acc = evaluate(model, val_loader, criterion, device)
        if val_acc > best_acc:
            best_acc = val_acc
            torch.save(model.state_dict(), "best.pt")
        print(f"epoch {epoch} val_loss={float(val_loss):.4f} val_acc={val_acc:.3f}")
