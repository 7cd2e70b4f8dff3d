import argparse
import math

import torch
import torch.nn as nn

from utils import SmoothenValue, Stopwatch, batchify, get_batch, perplexity, repackage_hidden


class RNNModel(nn.Module):
    def __init__(self, ntoken: int, ninp: int, nhid: int, nlayers: int, dropout: float = 0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, inp, hidden):
        emb = self.drop(self.encoder(inp))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output))
        return decoded.view(-1, decoded.size(-1)), hidden

    def init_hidden(self, bsz: int):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def train_epoch(model, train_data, optimizer, criterion, smoother, args, epoch):
    model.train()
    hidden = model.init_hidden(args.batch_size)
    watch = Stopwatch()
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i, args.bptt)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()

        smoother.add_value(loss)
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = float(smoother)
            print('| epoch {:3d} | {:5d} batches | ms/batch {:5.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
                epoch, batch, watch.lap() * 1000 / args.log_interval, cur_loss, perplexity(cur_loss)))


@torch.no_grad()
def evaluate(model, data_source, criterion, args):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(args.eval_batch_size)
    for i in range(0, data_source.size(0) - 1, args.bptt):
        data, targets = get_batch(data_source, i, args.bptt)
        output, hidden = model(data, hidden)
        total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def main():
    parser = argparse.ArgumentParser(description='LSTM language model')
    parser.add_argument('--ntokens', type=int, default=10000)
    parser.add_argument('--emsize', type=int, default=400)
    parser.add_argument('--nhid', type=int, default=1150)
    parser.add_argument('--nlayers', type=int, default=3)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--clip', type=float, default=0.25)
    parser.add_argument('--epochs', type=int, default=40)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--eval_batch_size', type=int, default=10)
    parser.add_argument('--bptt', type=int, default=70)
    parser.add_argument('--log-interval', type=int, default=200)
    args = parser.parse_args()

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    corpus_train = torch.randint(0, args.ntokens, (2_000_000,))
    corpus_valid = torch.randint(0, args.ntokens, (200_000,))
    train_data = batchify(corpus_train, args.batch_size).to(device)
    val_data = batchify(corpus_valid, args.eval_batch_size).to(device)

    model = RNNModel(args.ntokens, args.emsize, args.nhid, args.nlayers).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    smoother = SmoothenValue(0.98)
    best_val_loss = math.inf

    for epoch in range(1, args.epochs + 1):
        train_epoch(model, train_data, optimizer, criterion, smoother, args, epoch)
        val_loss = evaluate(model, val_data, criterion, args)
        print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
            epoch, val_loss, perplexity(val_loss)))
        if val_loss < best_val_loss:
            torch.save(model.state_dict(), 'lm_best.pt')
            best_val_loss = val_loss


if __name__ == '__main__':
    main()
