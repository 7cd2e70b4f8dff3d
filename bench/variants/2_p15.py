def train_epoch(model, loader, optimizer, loss_fn, metrics):
    for x, y in loader:
        y_hat = model(x)
        loss = loss_fn(y_hat, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics["loss"] += loss  # leak
