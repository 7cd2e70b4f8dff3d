"""BiLSTM text classifier trained with pytorch-ignite (AG News)."""
import argparse
import logging

import torch
import torch.nn as nn
from ignite.contrib.handlers import ProgressBar
from ignite.engine import Engine, Events, create_supervised_evaluator
from ignite.handlers import EarlyStopping, ModelCheckpoint
from ignite.metrics import Accuracy, Loss
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("agnews")


class BiLSTMClassifier(nn.Module):
    def __init__(self, vocab_size, emb_dim=300, hidden=256, n_classes=4, dropout=0.3):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.rnn = nn.LSTM(emb_dim, hidden, num_layers=2, bidirectional=True, batch_first=True, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, batch):
        ids, lengths = batch
        packed = pack_padded_sequence(self.emb(ids), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        h = torch.cat([h[-2], h[-1]], dim=-1)
        return self.fc(self.drop(h))


def collate_batch(samples):
    ids = [torch.as_tensor(s["ids"][:256]) for s in samples]
    lengths = torch.tensor([len(x) for x in ids])
    labels = torch.tensor([s["label"] for s in samples])
    return (pad_sequence(ids, batch_first=True), lengths), labels


def prepare_batch(batch, device, non_blocking=False):
    (ids, lengths), y = batch
    return (ids.to(device, non_blocking=non_blocking), lengths), y.to(device, non_blocking=non_blocking)


def make_trainer(model, optimizer, criterion, device, clip=1.0):
    def train_step(engine, batch):
        model.train()
        x, y = prepare_batch(batch, device)
        optimizer.zero_grad()
        logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        engine.state.smoothed_loss = 0.98 * engine.state.smoothed_loss + 0.02 * loss  # leak
        return loss.item()

    trainer = Engine(train_step)

    @trainer.on(Events.STARTED)
    def _init_state(engine):
        engine.state.smoothed_loss = 0.0

    @trainer.on(Events.ITERATION_COMPLETED(every=200))
    def _log(engine):
        logger.info("epoch %d iter %d loss %.4f smoothed %.4f", engine.state.epoch, engine.state.iteration,
                    engine.state.output, float(engine.state.smoothed_loss))

    return trainer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/agnews_train.pt")
    ap.add_argument("--valid", default="data/agnews_valid.pt")
    ap.add_argument("--vocab-size", type=int, default=50000)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    train_dl = DataLoader(torch.load(args.train), batch_size=args.bs, shuffle=True, collate_fn=collate_batch,
                          num_workers=2)
    valid_dl = DataLoader(torch.load(args.valid), batch_size=256, collate_fn=collate_batch)

    model = BiLSTMClassifier(args.vocab_size).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()
    trainer = make_trainer(model, optimizer, criterion, device)
    evaluator = create_supervised_evaluator(model, metrics={"acc": Accuracy(), "nll": Loss(criterion)},
                                            device=device, prepare_batch=prepare_batch)
    ProgressBar(persist=False).attach(trainer)

    @trainer.on(Events.EPOCH_COMPLETED)
    def _validate(engine):
        evaluator.run(valid_dl)
        m = evaluator.state.metrics
        logger.info("epoch %d valid acc %.4f nll %.4f", engine.state.epoch, m["acc"], m["nll"])

    def score_fn(engine):
        return engine.state.metrics["acc"]

    evaluator.add_event_handler(Events.COMPLETED, EarlyStopping(patience=3, score_function=score_fn, trainer=trainer))
    evaluator.add_event_handler(Events.COMPLETED, ModelCheckpoint("ckpt", "bilstm", n_saved=2, score_function=score_fn,
                                                                  require_empty=False), {"model": model})
    trainer.run(train_dl, max_epochs=args.epochs)


if __name__ == "__main__":
    main()
