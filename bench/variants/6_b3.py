def train_step(model, batch, opt, crit, stats):
    x, y = batch
    loss = crit(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    stats["loss"] += loss  # leak
    return loss


def main(model, loader, opt, crit):
    stats = {"loss": 0.0}
    for batch in loader:
        train_step(model, batch, opt, crit, stats)
    return stats
