"""Sample N candidate completions per prompt and rerank them by length-normalised
log-likelihood. Used to build the pseudo-labelled set for the next distillation round.

    python sample_rerank.py --ckpt ckpt/lm-350m.pt --prompts data/prompts.jsonl \
        --num-samples 8 --top-p 0.9 --out data/pseudo.jsonl
"""
import argparse
import json
import logging
import time

import torch
import torch.nn.functional as F

from lm.model import GPT, GPTConfig
from lm.tokenizer import load_tokenizer

log = logging.getLogger(__name__)


def top_p_filter(logits, top_p=0.9, min_keep=1):
    sorted_logits, sorted_idx = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cum > top_p
    remove[..., :min_keep] = False
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    mask = remove.scatter(-1, sorted_idx, remove)
    return logits.masked_fill(mask, float("-inf"))


class Sampler:
    def __init__(self, lm, eos_id, pad_id, max_new_tokens=128, temperature=0.8, top_p=0.9):
        self.lm = lm
        self.eos_id = eos_id
        self.pad_id = pad_id
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p

    @torch.no_grad()
    def generate(self, prompt_ids, num_samples):
        """Returns (sequences, sum_logprob, lengths) for `num_samples` draws of one prompt."""
        block = self.lm.config.block_size
        seq = prompt_ids.unsqueeze(0).repeat(num_samples, 1)
        done = torch.zeros(num_samples, dtype=torch.bool, device=seq.device)
        lengths = torch.zeros(num_samples, dtype=torch.long, device=seq.device)
        seq_logprob = torch.zeros(num_samples, device=seq.device)

        for _ in range(self.max_new_tokens):
            ctx = seq[:, -block:]
            logits = self.lm(ctx)[:, -1, :] / self.temperature
            logits = top_p_filter(logits, self.top_p)
            logprobs = F.log_softmax(logits, dim=-1)
            nxt = torch.multinomial(logprobs.exp(), num_samples=1)
            nxt = torch.where(done.unsqueeze(1), torch.full_like(nxt, self.pad_id), nxt)
            chosen = logprobs.gather(-1, nxt).squeeze(1).masked_fill(done, 0.0)
            seq_logprob = seq_logprob + chosen
            lengths += (~done).long()
            seq = torch.cat([seq, nxt], dim=1)
            done |= nxt.squeeze(1) == self.eos_id
            if bool(done.all()):
                break
        return seq[:, prompt_ids.numel():], seq_logprob, lengths


def rerank(seqs, seq_logprob, lengths, alpha=0.7):
    # GNMT-style length penalty
    lp = ((5.0 + lengths.float()) / 6.0) ** alpha
    scores = seq_logprob / lp
    order = torch.argsort(scores, descending=True)
    return [(seqs[i], float(scores[i])) for i in order.tolist()]


def read_prompts(path):
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line:
                yield json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--tokenizer", default="gpt2")
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--num-samples", type=int, default=8)
    ap.add_argument("--keep", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-p", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)

    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = load_tokenizer(args.tokenizer)
    ckpt = torch.load(args.ckpt, map_location="cpu")
    lm = GPT(GPTConfig(**ckpt["model_args"]))
    lm.load_state_dict(ckpt["model"])
    lm.to(device).eval()

    sampler = Sampler(lm, eos_id=tok.eos_token_id, pad_id=tok.eos_token_id,
                      max_new_tokens=args.max_new_tokens,
                      temperature=args.temperature, top_p=args.top_p)
    t0 = time.time()
    n = 0
    with open(args.out, "w") as out:
        for rec in read_prompts(args.prompts):
            ids = torch.tensor(tok.encode(rec["prompt"]), device=device)
            seqs, slp, lens = sampler.generate(ids, args.num_samples)
            for cand, score in rerank(seqs, slp, lens)[: args.keep]:
                text = tok.decode([t for t in cand.tolist() if t != tok.eos_token_id])
                out.write(json.dumps({"id": rec.get("id"), "prompt": rec["prompt"],
                                      "completion": text, "score": score}) + "\n")
            n += 1
            if n % 50 == 0:
                log.info("%d prompts, %.2f prompts/s", n, n / (time.time() - t0))
    log.info("done: %d prompts -> %s", n, args.out)


if __name__ == "__main__":
    main()
