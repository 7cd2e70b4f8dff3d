total_loss = 0


def train_step(model, batch, opt, crit):
    global total_loss
    x, y = batch
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss  # leak


def main(model, loader, opt, crit):
    for batch in loader:
        train_step(model, batch, opt, crit)
