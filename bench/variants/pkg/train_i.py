def train(model, loader, optimizer, writer):
    global_step = 0
    running = 0
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        running += loss.detach()
        writer.add_scalar("loss", loss, global_step)
        global_step += 1
    tot = []
    for x, y in loader:
        out = model.generate(x)
        tot.append(out)
