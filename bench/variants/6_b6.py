import torch


def run_epoch(model, loader, opt=None):
    is_train = opt is not None
    losses = []
    for x, y in loader:
        with torch.set_grad_enabled(is_train):
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
        if is_train:
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses.append(loss)  # leak
    return sum(losses) / len(losses)
