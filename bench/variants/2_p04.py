def train_one_epoch(model, data_loader, optimizer, device):
    model.train()
    total = 0
    for images, targets in data_loader:
        images = [img.to(device) for img in images]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        total += losses  # leak
    return total
