"""Retrieval evaluator in the detectron2 DatasetEvaluator style.

The runner calls ``reset()`` before each evaluation, then ``process()`` for every
batch and finally ``evaluate()``.
"""
import copy
import itertools
import logging
from collections import OrderedDict

import torch
import torch.nn.functional as F

from detectron2.evaluation import DatasetEvaluator
from detectron2.utils import comm

logger = logging.getLogger(__name__)


class RetrievalEvaluator(DatasetEvaluator):
    def __init__(self, dataset_name, topk=(1, 5, 10), distributed=True, keep_bank=False):
        self._dataset_name = dataset_name
        self._topk = tuple(topk)
        self._distributed = distributed
        self._keep_bank = keep_bank
        self._cpu_device = torch.device("cpu")
        self._predictions = []
        self._query_bank = []

    def reset(self):
        self._predictions = []
        self._query_bank = []

    def _embed(self, output):
        emb = output["embedding"]
        return F.normalize(emb, dim=-1)

    def process(self, inputs, outputs):
        for inp, out in zip(inputs, outputs):
            emb = self._embed(out).to(self._cpu_device)
            self._predictions.append(
                {"image_id": inp["image_id"], "label": int(inp["label"]), "emb": emb}
            )
            if self._keep_bank or out.get("is_query", False):
                self._query_bank.append(emb)

    def _gather(self):
        if self._distributed:
            comm.synchronize()
            preds = comm.gather(self._predictions, dst=0)
            preds = list(itertools.chain(*preds))
            if not comm.is_main_process():
                return None
            return preds
        return self._predictions

    @staticmethod
    def _recall_at_k(sim, labels, k):
        sim = sim.clone()
        sim.fill_diagonal_(-float("inf"))
        idx = sim.topk(k, dim=1).indices
        hit = (labels[idx] == labels[:, None]).any(dim=1)
        return hit.float().mean().item()

    def evaluate(self):
        preds = self._gather()
        if preds is None:
            return {}
        if len(preds) == 0:
            logger.warning("[RetrievalEvaluator] Did not receive valid predictions.")
            return {}
        embs = torch.stack([p["emb"] for p in preds])
        labels = torch.tensor([p["label"] for p in preds])
        sim = embs @ embs.t()
        res = OrderedDict()
        for k in self._topk:
            res[f"R@{k}"] = 100.0 * self._recall_at_k(sim, labels, k)
        logger.info("Retrieval results on %s: %s", self._dataset_name, res)
        if self._query_bank:
            logger.info("query bank holds %d embeddings", len(self._query_bank))
        return copy.deepcopy(OrderedDict(retrieval=res))
