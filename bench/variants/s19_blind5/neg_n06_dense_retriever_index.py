"""Dense retrieval index with brute-force inner-product search.

Documents are encoded once with :meth:`DenseIndex.add_documents` and stored as
a single fp16 matrix.  Queries are encoded on the fly; repeated queries (very
common for RAG evaluation sets and for agents re-asking the same question) hit
a size-bounded LRU memo instead of re-running the encoder.
"""
from __future__ import annotations

import argparse
import logging
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from cachetools import LRUCache
import torch.nn.functional as F

logger = logging.getLogger(__name__)

EncodeFn = Callable[[Sequence[str]], torch.Tensor]


class _QueryEncoder:
    """Batches encoder calls and memoises query embeddings by text (LRU, bounded)."""

    def __init__(self, encode_fn: EncodeFn, batch_size: int = 64, normalize: bool = True,
                 memo_size: int = 8192) -> None:
        self._encode_fn = encode_fn
        self._batch_size = batch_size
        self._normalize = normalize
        self._memo: "LRUCache[str, torch.Tensor]" = LRUCache(maxsize=memo_size)
        self.hits = 0
        self.misses = 0

    @torch.no_grad()
    def _encode_uncached(self, texts: List[str]) -> List[torch.Tensor]:
        out: List[torch.Tensor] = []
        for i in range(0, len(texts), self._batch_size):
            emb = self._encode_fn(texts[i : i + self._batch_size])
            if self._normalize:
                emb = F.normalize(emb, dim=-1)
            out.extend(emb.unbind(0))
        return out

    def __call__(self, queries: Sequence[str]) -> torch.Tensor:
        todo = [q for q in dict.fromkeys(queries) if q not in self._memo]
        self.hits += len(queries) - len(todo)
        self.misses += len(todo)
        fresh = dict(zip(todo, self._encode_uncached(todo)))
        vecs = [fresh[q] if q in fresh else self._memo[q] for q in queries]
        for q, vec in fresh.items():
            self._memo[q] = vec.cpu()
        return torch.stack([v.cpu() for v in vecs])


class DenseIndex:
    def __init__(self, encode_fn: EncodeFn, dim: int, device: Optional[str] = None) -> None:
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dim = dim
        self._encode_fn = encode_fn
        self._queries = _QueryEncoder(encode_fn)
        self._doc_ids: List[str] = []
        self._matrix = torch.empty(0, dim, dtype=torch.float16, device=self.device)

    def __len__(self) -> int:
        return len(self._doc_ids)

    @torch.no_grad()
    def add_documents(self, ids: Sequence[str], texts: Sequence[str], batch_size: int = 256) -> None:
        chunks = []
        for i in range(0, len(texts), batch_size):
            emb = F.normalize(self._encode_fn(texts[i : i + batch_size]), dim=-1)
            chunks.append(emb.to(self.device, torch.float16))
        self._matrix = torch.cat([self._matrix, *chunks], dim=0)
        self._doc_ids.extend(ids)
        logger.info("index now holds %d documents", len(self))

    @torch.no_grad()
    def search(self, queries: Sequence[str], k: int = 10) -> List[List[Tuple[str, float]]]:
        q = self._queries(queries).to(self.device, torch.float16)
        scores = q @ self._matrix.T
        top_scores, top_idx = scores.topk(min(k, len(self)), dim=-1)
        results = []
        for row_s, row_i in zip(top_scores.tolist(), top_idx.tolist()):
            results.append([(self._doc_ids[j], s) for j, s in zip(row_i, row_s)])
        return results

    @property
    def memo_stats(self) -> Dict[str, int]:
        return {"hits": self._queries.hits, "misses": self._queries.misses}


def _hashing_encoder(dim: int) -> EncodeFn:
    """Stand-in encoder for smoke tests (bag of hashed character trigrams)."""

    def encode(texts: Sequence[str]) -> torch.Tensor:
        out = torch.zeros(len(texts), dim)
        for row, t in enumerate(texts):
            for j in range(max(len(t) - 2, 1)):
                out[row, hash(t[j : j + 3]) % dim] += 1.0
        return out

    return encode


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--num-docs", type=int, default=5000)
    parser.add_argument("--num-queries", type=int, default=100000)
    args = parser.parse_args(argv)

    enc = _hashing_encoder(args.dim)
    index = DenseIndex(enc, args.dim)
    index.add_documents([f"d{i}" for i in range(args.num_docs)], [f"document number {i}" for i in range(args.num_docs)])
    for qi in range(args.num_queries):
        index.search([f"which document mentions {qi}?"], k=5)
    logger.info("memo stats: %s", index.memo_stats)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
