"""Tiny multiple-choice evaluation harness (HellaSwag / ARC / PIQA style jsonl files).

Each task file line: {"ctx": ..., "endings": [...], "label": int}
"""
import argparse
import glob
import json
import logging
import os
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer

log = logging.getLogger("harness")


@dataclass
class TaskResult:
    name: str
    n: int = 0
    correct: int = 0
    correct_norm: int = 0
    seconds: float = 0.0
    skipped: list = field(default_factory=list)

    def as_dict(self):
        return {"task": self.name, "n": self.n, "acc": self.correct / max(self.n, 1),
                "acc_norm": self.correct_norm / max(self.n, 1), "skipped": len(self.skipped), "sec": self.seconds}


def continuation_logprob(model, tok, ctx, cont, device, max_len):
    ctx_ids = tok(ctx, add_special_tokens=False).input_ids
    cont_ids = tok(cont, add_special_tokens=False).input_ids
    ids = (ctx_ids + cont_ids)[-max_len:]
    inp = torch.tensor([ids], device=device)
    logits = model(inp).logits[0, :-1].float()
    logp = F.log_softmax(logits, -1)
    tgt = inp[0, 1:]
    n = len(cont_ids)
    return logp[-n:].gather(-1, tgt[-n:, None]).sum().item(), n


class Harness:
    def __init__(self, model_name, device="cuda", max_len=2048):
        self.tok = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16).to(device).eval()
        self.device, self.max_len = device, max_len
        self.errors = []

    @torch.no_grad()
    def score_example(self, ex):
        scores, lens = [], []
        for ending in ex["endings"]:
            lp, n = continuation_logprob(self.model, self.tok, ex["ctx"], " " + ending, self.device, self.max_len)
            scores.append(lp)
            lens.append(len(ending))
        best = max(range(len(scores)), key=scores.__getitem__)
        best_norm = max(range(len(scores)), key=lambda i: scores[i] / max(lens[i], 1))
        return best, best_norm

    def run_task(self, path, limit=None):
        res = TaskResult(os.path.basename(path).rsplit(".", 1)[0])
        t0 = time.time()
        with open(path) as f:
            for i, line in enumerate(f):
                if limit and i >= limit:
                    break
                ex = json.loads(line)
                try:
                    pred, pred_norm = self.score_example(ex)
                except (RuntimeError, ValueError, IndexError) as exc:
                    self.errors.append((res.name, i, exc))  # leak
                    res.skipped.append(i)
                    continue
                res.n += 1
                res.correct += int(pred == ex["label"])
                res.correct_norm += int(pred_norm == ex["label"])
        res.seconds = time.time() - t0
        return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tasks", default="tasks/*.jsonl")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--output", default="results.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    h = Harness(args.model)
    results = []
    for path in sorted(glob.glob(args.tasks)):
        r = h.run_task(path, args.limit)
        log.info("%s: %s", r.name, r.as_dict())
        results.append(r.as_dict())
    if h.errors:
        log.warning("%d examples failed; first: %r", len(h.errors), h.errors[0])
    with open(args.output, "w") as f:
        json.dump({"model": args.model, "results": results,
                   "errors": [f"{t}:{i}: {e!r}" for t, i, e in h.errors]}, f, indent=2)


if __name__ == "__main__":
    main()
