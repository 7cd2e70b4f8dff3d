"""Multiple-choice evaluation harness (log-likelihood scoring).

Each task yields (context, choices, gold) triples; every choice is scored by the
summed log-probability of its continuation tokens.  Tasks that fail are
recorded and the harness moves on so that one broken task does not waste a
whole evaluation run.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

logger = logging.getLogger("harness")

Example = Tuple[List[int], List[List[int]], int]


@dataclass
class TaskResult:
    task: str
    n: int = 0
    acc: float = float("nan")
    acc_norm: float = float("nan")
    error: Optional[BaseException] = None
    extras: Dict[str, float] = field(default_factory=dict)


TASKS: Dict[str, Callable[[], Iterable[Example]]] = {}


def register_task(name):
    def deco(fn):
        TASKS[name] = fn
        return fn
    return deco


@torch.no_grad()
def continuation_logprob(model, ctx: Sequence[int], cont: Sequence[int], device) -> torch.Tensor:
    ids = torch.tensor([list(ctx) + list(cont)], device=device)
    logits = model(ids[:, :-1])
    logp = F.log_softmax(logits.float(), dim=-1)
    tgt = ids[:, 1:]
    tok_lp = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    return tok_lp[:, -len(cont):].sum()


def score_task(model, examples: Iterable[Example], device) -> Tuple[int, float, float]:
    n = hits = hits_norm = 0
    for ctx, choices, gold in examples:
        scores = torch.stack([continuation_logprob(model, ctx, c, device) for c in choices])
        lens = torch.tensor([len(c) for c in choices], device=scores.device, dtype=scores.dtype)
        hits += int(scores.argmax().item() == gold)
        hits_norm += int((scores / lens).argmax().item() == gold)
        n += 1
    return n, hits / max(n, 1), hits_norm / max(n, 1)


class Harness:
    def __init__(self, model, device="cpu"):
        self.model = model.to(device).eval()
        self.device = device
        self.records: List[TaskResult] = []

    def run(self, names: Sequence[str]) -> List[TaskResult]:
        for name in names:
            record = TaskResult(task=name)
            try:
                n, acc, acc_norm = score_task(self.model, TASKS[name](), self.device)
                record.n, record.acc, record.acc_norm = n, acc, acc_norm
            except Exception as exc:  # noqa: BLE001 - keep going, report at the end
                logger.exception("task %s failed", name)
                record.error = exc  # leak
            self.records.append(record)
        return self.records

    def summary(self) -> Dict[str, Dict[str, object]]:
        out = {}
        for r in self.records:
            if r.error is not None:
                out[r.task] = {"error": repr(r.error)}
            else:
                out[r.task] = {"n": r.n, "acc": round(r.acc, 4), "acc_norm": round(r.acc_norm, 4)}
        return out


@register_task("synthetic_copy")
def _synthetic_copy():
    g = torch.Generator().manual_seed(0)
    for _ in range(64):
        ctx = torch.randint(5, 500, (32,), generator=g).tolist()
        gold = int(torch.randint(0, 4, (1,), generator=g))
        choices = [torch.randint(5, 500, (4,), generator=g).tolist() for _ in range(4)]
        choices[gold] = ctx[:4]
        yield ctx, choices, gold


@register_task("synthetic_long")
def _synthetic_long():
    g = torch.Generator().manual_seed(1)
    for _ in range(16):
        # longer than the toy model's positional table on purpose
        ctx = torch.randint(5, 500, (4096,), generator=g).tolist()
        yield ctx, [[7, 8], [9, 10]], 0


class ToyLM(torch.nn.Module):
    def __init__(self, vocab=512, dim=128, max_len=2048):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(max_len, dim)
        self.out = torch.nn.Linear(dim, vocab)

    def forward(self, ids):
        pos = torch.arange(ids.size(1), device=ids.device)
        return self.out(torch.tanh(self.tok(ids) + self.pos(pos)))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--repeat", type=int, default=1, help="re-run the suite (stability checks)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    harness = Harness(ToyLM(), device=args.device)
    for _ in range(args.repeat):
        harness.run(args.tasks.split(","))
    json.dump(harness.summary(), sys.stdout, indent=2)


if __name__ == "__main__":
    main()
