def train(args, model, train_iter, optimizer):
    step = 0
    losses = []
    while step < args.max_steps:
        batch = next(train_iter)
        loss = model(batch["input_ids"], labels=batch["labels"])[0]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss)  # leak
        step += 1
    return losses
