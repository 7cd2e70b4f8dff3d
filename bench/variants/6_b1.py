def train(model, loader, opt, crit):
    total = 0.0

    def step(x, y):
        nonlocal total
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss  # leak

    for x, y in loader:
        step(x, y)
    return total
