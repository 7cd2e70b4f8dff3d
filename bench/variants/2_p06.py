from tqdm import tqdm


def run(model, loader, opt, loss_fn, epochs):
    history = {"train_loss": []}
    for epoch in range(epochs):
        for x, y in tqdm(loader):
            pred = model(x)
            loss = loss_fn(pred, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history["train_loss"].append(loss)  # leak
    return history
