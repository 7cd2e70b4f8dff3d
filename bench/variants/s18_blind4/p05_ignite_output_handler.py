"""Segmentation training with pytorch-ignite; a handler keeps the loss curve
for plotting at the end of the run."""
import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from ignite.engine import Engine, Events
from ignite.handlers import ModelCheckpoint
from ignite.metrics import Loss, ConfusionMatrix, mIoU
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("seg")


def make_model(num_classes):
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(64, num_classes, 1),
    )


def dice_loss(logits, target, eps=1.0):
    probs = logits.softmax(1)
    onehot = F.one_hot(target, probs.shape[1]).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((0, 2, 3))
    denom = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
    return 1 - ((2 * inter + eps) / (denom + eps)).mean()


def create_trainer(model, optimizer, device, dice_weight):
    def update(engine, batch):
        model.train()
        x, y = (t.to(device, non_blocking=True) for t in batch)
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        dl = dice_loss(logits, y)
        loss = ce + dice_weight * dl
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return {"loss": loss, "ce": ce, "dice": dl}

    return Engine(update)


class CurveRecorder:
    def __init__(self, keys=("loss", "ce", "dice")):
        self.curves = {k: [] for k in keys}

    def attach(self, engine, every=1):
        engine.add_event_handler(Events.ITERATION_COMPLETED(every=every), self)

    def __call__(self, engine):
        for key, values in self.curves.items():
            values.append(engine.state.output[key])  # leak

    def to_numpy(self):
        return {k: torch.stack(v).detach().cpu().numpy() for k, v in self.curves.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--num-classes", type=int, default=21)
    ap.add_argument("--dice-weight", type=float, default=0.5)
    ap.add_argument("--out", default="checkpoints")
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = make_model(args.num_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ds = TensorDataset(torch.randn(512, 3, 128, 128), torch.randint(0, args.num_classes, (512, 128, 128)))
    train_loader = DataLoader(ds, batch_size=8, shuffle=True, num_workers=2)
    val_loader = DataLoader(ds, batch_size=8)

    trainer = create_trainer(model, optimizer, device, args.dice_weight)
    recorder = CurveRecorder()
    recorder.attach(trainer)

    def eval_step(engine, batch):
        model.eval()
        with torch.no_grad():
            x, y = (t.to(device) for t in batch)
            return model(x), y

    evaluator = Engine(eval_step)
    cm = ConfusionMatrix(num_classes=args.num_classes)
    mIoU(cm).attach(evaluator, "miou")
    Loss(F.cross_entropy).attach(evaluator, "ce")

    @trainer.on(Events.EPOCH_COMPLETED)
    def run_validation(engine):
        evaluator.run(val_loader)
        m = evaluator.state.metrics
        log.info("epoch %d  val ce=%.4f  mIoU=%.4f", engine.state.epoch, m["ce"], m["miou"])

    ckpt = ModelCheckpoint(args.out, "seg", n_saved=2, require_empty=False)
    trainer.add_event_handler(Events.EPOCH_COMPLETED, ckpt, {"model": model})
    trainer.run(train_loader, max_epochs=args.epochs)
    curves = recorder.to_numpy()
    log.info("final loss %.4f", curves["loss"][-1])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
