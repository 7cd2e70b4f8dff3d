"""Encode a large passage corpus into a dense index (DPR / contriever style).

Passage lengths vary wildly, so a fixed batch size sometimes OOMs; in that case the
batch is split and encoded in halves.
"""
import argparse
import json
import logging
import os

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

logger = logging.getLogger("encode")


def read_passages(path):
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            yield rec["id"], (rec.get("title", "") + " " + rec["text"]).strip()


def chunked(it, n):
    buf = []
    for x in it:
        buf.append(x)
        if len(buf) == n:
            yield buf
            buf = []
    if buf:
        yield buf


def mean_pool(last_hidden, mask):
    mask = mask.unsqueeze(-1).to(last_hidden.dtype)
    return (last_hidden * mask).sum(1) / mask.sum(1).clamp_min(1e-6)


@torch.inference_mode()
def encode_texts(model, tok, texts, device, max_len):
    enc = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt").to(device)
    out = model(**enc)
    emb = mean_pool(out.last_hidden_state, enc["attention_mask"])
    return torch.nn.functional.normalize(emb, dim=-1).float().cpu()


def encode_with_fallback(model, tok, texts, device, max_len):
    oom = False
    try:
        return encode_texts(model, tok, texts, device, max_len)
    except torch.cuda.OutOfMemoryError:
        if len(texts) == 1:
            raise
        oom = True
    # retry outside the except block so the failed frame (and its activations) is released first
    if oom:
        logger.warning("OOM on batch of %d, splitting", len(texts))
        torch.cuda.empty_cache()
        mid = len(texts) // 2
        return torch.cat([encode_with_fallback(model, tok, texts[:mid], device, max_len),
                          encode_with_fallback(model, tok, texts[mid:], device, max_len)])


class ShardWriter:
    def __init__(self, out_dir, shard_size):
        self.out_dir, self.shard_size = out_dir, shard_size
        self.ids, self.vecs, self.shard = [], [], 0
        os.makedirs(out_dir, exist_ok=True)

    def add(self, ids, vecs):
        self.ids.extend(ids)
        self.vecs.append(vecs.numpy().astype(np.float16))
        if len(self.ids) >= self.shard_size:
            self.flush()

    def flush(self):
        if not self.ids:
            return
        np.save(os.path.join(self.out_dir, f"emb_{self.shard:04d}.npy"), np.concatenate(self.vecs))
        with open(os.path.join(self.out_dir, f"ids_{self.shard:04d}.txt"), "w") as f:
            f.write("\n".join(self.ids))
        logger.info("wrote shard %d (%d passages)", self.shard, len(self.ids))
        self.ids, self.vecs, self.shard = [], [], self.shard + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", required=True)
    ap.add_argument("--model", default="facebook/contriever-msmarco")
    ap.add_argument("--out-dir", default="index")
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--shard-size", type=int, default=1_000_000)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    device = torch.device("cuda")
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model, torch_dtype=torch.float16).to(device).eval()
    writer = ShardWriter(args.out_dir, args.shard_size)
    for i, chunk in enumerate(chunked(read_passages(args.passages), args.batch_size)):
        ids, texts = zip(*chunk)
        vecs = encode_with_fallback(model, tok, list(texts), device, args.max_len)
        writer.add(list(ids), vecs)
        if i % 100 == 0:
            logger.info("encoded %d batches", i)
    writer.flush()


if __name__ == "__main__":
    main()
