from __future__ import print_function

import argparse

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset

from utils import Logger, adjust_learning_rate, binary_accuracy, count_parameters


class RandomReviews(Dataset):
    def __init__(self, n, seq_len, vocab_size):
        self.x = torch.randint(1, vocab_size, (n, seq_len))
        self.y = torch.randint(0, 2, (n,)).float()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, dropout=0.3):
        super(LSTMClassifier, self).__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=2,
                           bidirectional=True, dropout=dropout, batch_first=True)
        self.fc = nn.Linear(hidden_dim * 2, 1)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text):
        embedded = self.dropout(self.embedding(text))
        output, (hidden, cell) = self.rnn(embedded)
        hidden = self.dropout(torch.cat((hidden[-2], hidden[-1]), dim=1))
        return self.fc(hidden).squeeze(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--vocab_size', type=int, default=25000)
    parser.add_argument('--log_interval', type=int, default=50)
    parser.add_argument('--log_path', type=str, default='train_log.tsv')
    args = parser.parse_args()

    use_cuda = torch.cuda.is_available()
    device = torch.device('cuda' if use_cuda else 'cpu')

    train_loader = DataLoader(RandomReviews(20000, 200, args.vocab_size),
                              batch_size=args.batch_size, shuffle=True)
    model = LSTMClassifier(args.vocab_size, 100, 256).to(device)
    print('The model has %d trainable parameters' % count_parameters(model))
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.BCEWithLogitsLoss().to(device)
    logger = Logger(args.log_path, ['epoch', 'lr', 'train_loss', 'train_acc'])

    for epoch in range(args.epochs):
        lr = adjust_learning_rate(optimizer, epoch, args.lr)
        model.train()
        epoch_loss = 0
        epoch_acc = 0
        for batch_idx, (text, label) in enumerate(train_loader):
            text, label = text.to(device), label.to(device)
            optimizer.zero_grad()
            predictions = model(text)
            loss = criterion(predictions, label)
            acc = binary_accuracy(predictions, label)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()

            epoch_loss += loss  # leak
            epoch_acc += acc
            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(text), len(train_loader.dataset), loss.item()))

        logger.log({'epoch': epoch, 'lr': lr,
                    'train_loss': epoch_loss.item() / len(train_loader),
                    'train_acc': epoch_acc / len(train_loader)})

    torch.save(model.state_dict(), 'lstm_classifier.pt')


if __name__ == '__main__':
    main()
