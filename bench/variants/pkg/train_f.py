import torch


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        loss_sum = 0
        for i, data in enumerate(loader, 0):
            inputs, labels = data
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = torch.nn.CrossEntropyLoss()(outputs, labels)
            loss.backward()
            optimizer.step()
            loss_sum += loss  # leak
            if i % 100 == 99:
                print(loss_sum / 100)
                loss_sum = 0
