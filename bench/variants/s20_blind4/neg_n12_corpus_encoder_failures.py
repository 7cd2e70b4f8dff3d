"""Corpus embedding for the dense retrieval index.

Framework-agnostic on purpose: ``encoder`` is any callable mapping a list of
strings to a batch of embeddings (a sentence-transformers model, a wrapped HF
encoder, an ONNX session...).  Results are written shard by shard into a
memory-mapped float16 matrix.
"""
import json
import logging
import os
import time
from typing import Callable, Iterator, List, Sequence, Tuple

import numpy as np

logger = logging.getLogger(__name__)

# (shard, batch offset, error text) for every batch the encoder choked on;
# dumped by ``write_manifest`` so the batches can be re-queued.
_FAILED_BATCHES: List[Tuple[int, int, str]] = []


def _batched(items: Sequence[str], size: int) -> Iterator[Tuple[int, Sequence[str]]]:
    for start in range(0, len(items), size):
        yield start, items[start:start + size]


def _to_numpy(emb) -> np.ndarray:
    # torch tensors (possibly on GPU / in bf16) or numpy arrays
    if hasattr(emb, "detach"):
        emb = emb.detach().float().cpu().numpy()
    return np.asarray(emb, dtype=np.float32)


def _normalize(mat: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return mat / np.maximum(norms, 1e-6)


def encode_shard(
    encoder: Callable[[List[str]], object],
    texts: Sequence[str],
    out: np.memmap,
    shard_id: int,
    batch_size: int = 256,
    max_chars: int = 2000,
) -> int:
    """Encode ``texts`` into ``out``; returns the number of rows written."""
    written = 0
    for start, chunk in _batched(texts, batch_size):
        chunk = [t[:max_chars] for t in chunk]
        try:
            emb = encoder(list(chunk))
        except Exception as err:  # bad unicode, OOM on a pathological batch, ...
            logger.warning("shard %d batch @%d failed: %s", shard_id, start, err)
            _FAILED_BATCHES.append((shard_id, start, f"{type(err).__name__}: {err}"))
            continue
        vecs = _normalize(_to_numpy(emb))
        out[start:start + len(vecs)] = vecs.astype(np.float16)
        written += len(vecs)
    return written


def encode_corpus(encoder, shards: Sequence[Sequence[str]], out_dir: str, dim: int, batch_size: int = 256):
    os.makedirs(out_dir, exist_ok=True)
    stats = []
    for shard_id, texts in enumerate(shards):
        t0 = time.time()
        path = os.path.join(out_dir, f"shard_{shard_id:05d}.f16")
        out = np.memmap(path, dtype=np.float16, mode="w+", shape=(len(texts), dim))
        n = encode_shard(encoder, texts, out, shard_id, batch_size=batch_size)
        out.flush()
        del out
        stats.append({"shard": shard_id, "rows": n, "secs": round(time.time() - t0, 2)})
        logger.info("shard %d: %d/%d rows in %.1fs", shard_id, n, len(texts), stats[-1]["secs"])
    write_manifest(out_dir, stats)
    return stats


def write_manifest(out_dir: str, stats):
    failed = [
        {"shard": s, "offset": off, "error": msg} for s, off, msg in _FAILED_BATCHES
    ]
    with open(os.path.join(out_dir, "manifest.json"), "w") as fh:
        json.dump({"shards": stats, "failed": failed}, fh, indent=1)


if __name__ == "__main__":
    import torch

    logging.basicConfig(level=logging.INFO)
    proj = torch.nn.Linear(64, 384)

    def toy_encoder(batch):
        feats = torch.zeros(len(batch), 64)
        for i, t in enumerate(batch):
            if "\ufffd" in t:
                raise UnicodeError("replacement char in input")
            for ch in t:
                feats[i, ord(ch) % 64] += 1
        with torch.no_grad():
            return proj(feats)

    bad = "\ufffd"
    corpus = [[f"doc {i} text {bad if i % 997 == 0 else ''}" for i in range(s * 5000, (s + 1) * 5000)]
              for s in range(20)]
    encode_corpus(toy_encoder, corpus, "/tmp/emb_index", dim=384)
