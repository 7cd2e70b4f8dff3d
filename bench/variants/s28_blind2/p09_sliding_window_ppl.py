"""Strided (sliding-window) perplexity for merged LoRA checkpoints.

Usage:
    python eval_ppl.py --model out/merged --dataset wikitext --config wikitext-2-raw-v1
"""
import argparse
import logging
import math
from typing import Iterator, Tuple

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

logger = logging.getLogger("eval.ppl")


class SlidingWindowPerplexity:
    def __init__(self, model, tokenizer, max_length: int = 2048, stride: int = 512,
                 device: str = "cuda"):
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.stride = stride
        self.device = torch.device(device)

    def windows(self, n_tokens: int) -> Iterator[Tuple[int, int, int]]:
        prev_end = 0
        for begin in range(0, n_tokens, self.stride):
            end = min(begin + self.max_length, n_tokens)
            yield begin, end, end - prev_end
            prev_end = end
            if end == n_tokens:
                break

    def _score_window(self, input_ids: torch.Tensor, begin: int, end: int, n_new: int):
        window = input_ids[:, begin:end].to(self.device)
        targets = window.clone()
        targets[:, :-n_new] = -100
        out = self.model(window, labels=targets)
        n_scored = (targets[:, 1:] != -100).sum()
        return out.loss * n_scored, n_scored

    def __call__(self, text: str) -> dict:
        self.model.eval()
        input_ids = self.tokenizer(text, return_tensors="pt").input_ids
        n_tokens = input_ids.size(1)
        nlls, counts = [], []
        for i, (begin, end, n_new) in enumerate(self.windows(n_tokens)):
            scored = self._score_window(input_ids, begin, end, n_new)
            nll, n = scored
            nlls.append(nll)  # leak
            counts.append(n)
            if i % 50 == 0:
                logger.info("window %d: tokens %d-%d", i, begin, end)
        total_nll = torch.stack(nlls).sum()
        total_tokens = torch.stack(counts).sum()
        mean_nll = (total_nll / total_tokens).item()
        return {"tokens": n_tokens, "nll": mean_nll, "ppl": math.exp(mean_nll)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--dataset", default="wikitext")
    parser.add_argument("--config", default="wikitext-2-raw-v1")
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--stride", type=int, default=512)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16).cuda()
    data = load_dataset(args.dataset, args.config, split=args.split)
    text = "\n\n".join(data["text"])

    scorer = SlidingWindowPerplexity(model, tokenizer, args.max_length, args.stride)
    result = scorer(text)
    logger.info("%s: ppl=%.3f over %d tokens", args.model, result["ppl"], result["tokens"])


if __name__ == "__main__":
    main()
