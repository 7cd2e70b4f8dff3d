"""Base class for acquisition strategies."""
import abc
import logging
from typing import List, Sequence

import numpy as np
import torch
from torch.utils.data import DataLoader, Subset

logger = logging.getLogger(__name__)


class QueryStrategy(abc.ABC):
    """Scores unlabeled examples and returns the indices to send for annotation.

    Inference over the unlabeled pool is done in large batches; when that runs out
    of memory the batch is split and retried so a long AL run is not lost.
    """

    def __init__(self, batch_size: int = 1024, num_workers: int = 4, device: str = "cuda"):
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.device = device
        self.oom_events: List[BaseException] = []

    def _loader(self, dataset, indices: Sequence[int]) -> DataLoader:
        return DataLoader(Subset(dataset, list(indices)), batch_size=self.batch_size,
                          shuffle=False, num_workers=self.num_workers, pin_memory=True)

    def _forward_chunked(self, model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        try:
            return model(x).softmax(dim=-1)
        except torch.cuda.OutOfMemoryError as err:
            self.oom_events.append(err)  # leak
            torch.cuda.empty_cache()
            if x.shape[0] == 1:
                raise
            half = x.shape[0] // 2
            logger.warning("OOM on batch of %d, retrying in halves", x.shape[0])
            return torch.cat([self._forward_chunked(model, x[:half]),
                              self._forward_chunked(model, x[half:])])

    @torch.no_grad()
    def predict_probs(self, model: torch.nn.Module, dataset, indices: Sequence[int],
                      mc_samples: int = 1) -> torch.Tensor:
        """Returns (mc_samples, N, C) class probabilities on CPU."""
        if mc_samples > 1:
            enable_mc_dropout(model)
        else:
            model.eval()
        out = []
        for x, _ in self._loader(dataset, indices):
            x = x.to(self.device, non_blocking=True)
            out.append(torch.stack([self._forward_chunked(model, x) for _ in range(mc_samples)]).cpu())
        model.eval()
        return torch.cat(out, dim=1)

    @abc.abstractmethod
    def score(self, model, dataset, pool_indices: Sequence[int]) -> np.ndarray:
        """Higher is more informative."""

    def query(self, model, dataset, pool_indices: Sequence[int], budget: int) -> np.ndarray:
        pool = np.asarray(pool_indices)
        scores = self.score(model, dataset, pool)
        top = np.argsort(-scores)[:budget]
        logger.info("%s: picked %d of %d (score range %.4f..%.4f)", type(self).__name__,
                    len(top), len(pool), float(scores[top].min()), float(scores[top].max()))
        return pool[top]


def enable_mc_dropout(model: torch.nn.Module) -> None:
    model.eval()
    for m in model.modules():
        if isinstance(m, (torch.nn.Dropout, torch.nn.Dropout2d)):
            m.train()
