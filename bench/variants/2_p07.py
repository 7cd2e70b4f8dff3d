def train(net, dataloader, optimizer, criterion):
    avg_loss = 0.0
    for data, target in dataloader:
        optimizer.zero_grad()
        output = net(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        avg_loss = 0.99 * avg_loss + 0.01 * loss  # leak
    return avg_loss
