"""Dense passage retrieval for the RAG service.

Passages are embedded offline (see ``build_index.py``); at query time we embed
the user query with the same bi-encoder and do exact inner-product search on
the GPU, which is fast enough for a few million passages.
"""
import functools
import json
import logging
from typing import Dict, List, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer

logger = logging.getLogger(__name__)

QUERY_PREFIX = "query: "


@functools.lru_cache(maxsize=16384)
def _normalize_query(query: str) -> str:
    return QUERY_PREFIX + " ".join(query.strip().split())


class DenseRetriever(nn.Module):
    def __init__(self, model_name: str, index_dir: str, device: str = "cuda", max_length: int = 64):
        super().__init__()
        self.device = torch.device(device)
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.encoder = AutoModel.from_pretrained(model_name, torch_dtype=torch.float16)
        self.register_buffer("passage_emb", torch.load(f"{index_dir}/embeddings.pt"), persistent=False)
        with open(f"{index_dir}/passages.jsonl") as fh:
            self.passages = [json.loads(line) for line in fh]
        self.to(self.device).eval()
        logger.info("loaded %d passages (dim=%d)", len(self.passages), self.passage_emb.shape[1])

    @staticmethod
    def _mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        mask = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-6)

    @torch.inference_mode()
    def embed_query(self, query: str) -> torch.Tensor:
        batch = self.tokenizer(
            _normalize_query(query),
            max_length=self.max_length,
            truncation=True,
            return_tensors="pt",
        ).to(self.device)
        with torch.no_grad():
            hidden = self.encoder(**batch).last_hidden_state
        return F.normalize(self._mean_pool(hidden, batch["attention_mask"]), dim=-1)

    def forward(self, queries: Sequence[str], k: int = 10):
        q = torch.cat([self.embed_query(text) for text in queries], dim=0)
        scores = q @ self.passage_emb.T
        return scores.topk(k, dim=-1)

    def search(self, queries: Sequence[str], k: int = 10) -> List[List[Dict]]:
        top = self(queries, k=k)
        results = []
        for row_scores, row_idx in zip(top.values.tolist(), top.indices.tolist()):
            results.append([
                {**self.passages[i], "score": round(s, 4)} for s, i in zip(row_scores, row_idx)
            ])
        return results


def build_context(retriever: DenseRetriever, question: str, k: int = 5, max_chars: int = 6000) -> str:
    hits = retriever.search([question], k=k)[0]
    chunks, used = [], 0
    for hit in hits:
        text = f"[{hit.get('title', '')}] {hit['text']}"
        if used + len(text) > max_chars:
            break
        chunks.append(text)
        used += len(text)
    return "\n\n".join(chunks)
