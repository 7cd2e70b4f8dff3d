import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

from pytorchtools import EarlyStopping, LossHistory


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(28 * 28, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 10)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x):
        x = x.view(-1, 28 * 28)
        x = self.dropout(F.relu(self.fc1(x)))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.fc3(x)


def create_loaders(batch_size, valid_size=0.2):
    data = TensorDataset(torch.rand(60000, 1, 28, 28), torch.randint(0, 10, (60000,)))
    num_train = len(data)
    indices = list(range(num_train))
    np.random.shuffle(indices)
    split = int(np.floor(valid_size * num_train))
    train_idx, valid_idx = indices[split:], indices[:split]
    train_loader = DataLoader(data, batch_size=batch_size, sampler=SubsetRandomSampler(train_idx), num_workers=0)
    valid_loader = DataLoader(data, batch_size=batch_size, sampler=SubsetRandomSampler(valid_idx), num_workers=0)
    return train_loader, valid_loader


def train_epoch(model, loader, criterion, optimizer, device):
    model.train()
    train_losses = []
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())
    return np.average(train_losses)


def validate(model, loader, criterion, device):
    model.eval()
    valid_loss = 0.0
    n = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            valid_loss = valid_loss + criterion(output, target) * data.size(0)
            n += data.size(0)
    return valid_loss.item() / n


def train_model(model, batch_size, patience, n_epochs, device):
    train_loader, valid_loader = create_loaders(batch_size)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters())
    history = LossHistory()
    early_stopping = EarlyStopping(patience=patience, verbose=True)

    for epoch in range(1, n_epochs + 1):
        train_loss = train_epoch(model, train_loader, criterion, optimizer, device)
        valid_loss = validate(model, valid_loader, criterion, device)
        history.add(train_loss, valid_loss)

        epoch_len = len(str(n_epochs))
        print(f'[{epoch:>{epoch_len}}/{n_epochs:>{epoch_len}}] ' +
              f'train_loss: {train_loss:.5f} ' +
              f'valid_loss: {valid_loss:.5f}')

        early_stopping(valid_loss, model)
        if early_stopping.early_stop:
            print("Early stopping")
            break

    model.load_state_dict(torch.load('checkpoint.pt'))
    return model, history


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--patience', type=int, default=20)
    parser.add_argument('--epochs', type=int, default=100)
    args = parser.parse_args()
    dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model, history = train_model(Net().to(dev), args.batch_size, args.patience, args.epochs, dev)
    print('best epoch:', history.best_epoch())
