def train(model, loader, optimizer):
    epoch_losses = {}
    for x, y in loader:
        loss_dict = model(x, y)
        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for k, v in loss_dict.items():
            epoch_losses[k] = epoch_losses.get(k, 0) + v  # leak
    return epoch_losses
