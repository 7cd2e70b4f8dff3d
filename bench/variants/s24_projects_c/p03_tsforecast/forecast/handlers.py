"""Ignite event handlers used by the training script."""
import logging

import torch
from ignite.engine import Engine, Events
from ignite.handlers import EarlyStopping, ModelCheckpoint

logger = logging.getLogger(__name__)


def _log_residual_profile(engine: Engine, y_pred: torch.Tensor, y: torch.Tensor, step: int) -> None:
    """Mean absolute residual by lead time for one probed batch."""
    resid = (y_pred - y).abs().mean(dim=0)
    worst = int(resid.argmax())
    logger.info("epoch %d probe@%d: mae h+1 %.3f, h+%d %.3f (worst lead)", engine.state.epoch, step,
                resid[0].item(), worst + 1, resid[worst].item())


def attach_residual_probe(engine: Engine, y_pred: torch.Tensor, y: torch.Tensor) -> None:
    """Report the residual profile of the current batch once the epoch finishes."""
    step = engine.state.iteration
    engine.add_event_handler(Events.EPOCH_COMPLETED, lambda e: _log_residual_profile(e, y_pred, y, step))  # leak


def attach_progress(trainer: Engine, log_every: int = 50) -> None:
    @trainer.on(Events.ITERATION_COMPLETED(every=log_every))
    def _log(engine):
        out = engine.state.output
        logger.info("epoch %d iter %d loss %.4f", engine.state.epoch, engine.state.iteration, out["loss"])


def attach_validation(trainer: Engine, evaluator: Engine, val_loader, scaler, target_idx: int) -> None:
    @trainer.on(Events.EPOCH_COMPLETED)
    def _validate(engine):
        evaluator.run(val_loader)
        m = evaluator.state.metrics
        logger.info("val epoch %d: mae %.4f (scaled) pinball %.4f", engine.state.epoch, m["mae"], m["pinball"])


def attach_checkpointing(trainer: Engine, evaluator: Engine, model, out_dir: str, patience: int = 8):
    def score_fn(engine):
        return -engine.state.metrics["pinball"]

    ckpt = ModelCheckpoint(out_dir, "forecaster", n_saved=2, score_function=score_fn,
                           score_name="neg_pinball", require_empty=False)
    evaluator.add_event_handler(Events.COMPLETED, ckpt, {"model": model})
    stopper = EarlyStopping(patience=patience, score_function=score_fn, trainer=trainer)
    evaluator.add_event_handler(Events.COMPLETED, stopper)
    return ckpt
