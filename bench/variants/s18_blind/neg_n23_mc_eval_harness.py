"""Zero-shot multiple-choice evaluation (HellaSwag / PIQA / ARC style).

Each example has a context and N candidate continuations; the prediction is
the continuation with the highest (length-normalised) log-likelihood.
"""
import argparse
import json
import logging
import time
from typing import Dict, Iterable, List

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer

logger = logging.getLogger("mc_eval")


def load_jsonl(path) -> List[Dict]:
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def build_requests(tok, example, max_len):
    ctx_ids = tok(example["context"], add_special_tokens=False).input_ids
    reqs = []
    for ending in example["endings"]:
        cont_ids = tok(" " + ending.strip(), add_special_tokens=False).input_ids
        ids = (ctx_ids + cont_ids)[-max_len:]
        reqs.append((ids, len(cont_ids)))
    return reqs


def pad_batch(reqs, pad_id, device):
    L = max(len(ids) for ids, _ in reqs)
    input_ids = torch.full((len(reqs), L), pad_id, dtype=torch.long)
    attn = torch.zeros((len(reqs), L), dtype=torch.long)
    for i, (ids, _) in enumerate(reqs):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        attn[i, : len(ids)] = 1
    return input_ids.to(device), attn.to(device)


@torch.inference_mode()
def score_example(model, tok, example, max_len, device):
    reqs = build_requests(tok, example, max_len)
    input_ids, attn = pad_batch(reqs, tok.pad_token_id, device)
    out = model(input_ids=input_ids, attention_mask=attn)
    logits = out.logits.float()
    logprobs = F.log_softmax(logits[:, :-1], dim=-1)
    targets = input_ids[:, 1:]
    tok_lp = logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    scores = []
    for i, (ids, n_cont) in enumerate(reqs):
        end = len(ids) - 1
        lp = tok_lp[i, end - n_cont : end]
        scores.append((lp.sum().item(), lp.mean().item()))
    del out, logits, logprobs, tok_lp
    return scores


def evaluate(model, tok, examples: Iterable[Dict], max_len=2048, device="cuda", limit=None):
    n = correct = correct_norm = 0
    t0 = time.time()
    for ex in examples:
        scores = score_example(model, tok, ex, max_len, device)
        pred = max(range(len(scores)), key=lambda i: scores[i][0])
        pred_norm = max(range(len(scores)), key=lambda i: scores[i][1])
        correct += int(pred == ex["label"])
        correct_norm += int(pred_norm == ex["label"])
        n += 1
        if n % 500 == 0:
            logger.info("%d examples, acc=%.4f acc_norm=%.4f (%.1f ex/s)", n, correct / n, correct_norm / n, n / (time.time() - t0))
        if limit and n >= limit:
            break
    return {"acc": correct / max(n, 1), "acc_norm": correct_norm / max(n, 1), "n": n}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tasks", nargs="+", required=True, help="jsonl files with context/endings/label")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", default="mc_results.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    tok = AutoTokenizer.from_pretrained(args.model)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=getattr(torch, args.dtype)).cuda().eval()

    results = {}
    for path in args.tasks:
        name = path.rsplit("/", 1)[-1].replace(".jsonl", "")
        results[name] = evaluate(model, tok, load_jsonl(path), limit=args.limit)
        logger.info("%s: %s", name, results[name])
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
