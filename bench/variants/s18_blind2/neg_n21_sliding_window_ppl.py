"""Sliding-window perplexity evaluation for causal LMs (HF transformers).

    python p21_sliding_window_ppl.py --model gpt2-large --stride 512
"""
import argparse
import json
import math
import time

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer


def encode_corpus(tokenizer, dataset_name, config, split):
    ds = load_dataset(dataset_name, config, split=split)
    text = "\n\n".join(ds["text"])
    return tokenizer(text, return_tensors="pt").input_ids


def windows(n_tokens, max_len, stride):
    prev_end = 0
    for begin in range(0, n_tokens, stride):
        end = min(begin + max_len, n_tokens)
        yield begin, end, end - prev_end
        prev_end = end
        if end == n_tokens:
            break


def score_window(model, input_ids, trg_len, want_hidden=False):
    target_ids = input_ids.clone()
    target_ids[:, :-trg_len] = -100
    out = model(input_ids, labels=target_ids, output_hidden_states=want_hidden)
    hidden = out.hidden_states[-1] if want_hidden else None
    return out.loss, out.logits, hidden


@torch.no_grad()
def evaluate(model, encodings, device, max_len, stride, collect_entropy=False):
    nlls, n_tok = [], 0
    entropies = []
    seq_len = encodings.size(1)
    for begin, end, trg_len in windows(seq_len, max_len, stride):
        input_ids = encodings[:, begin:end].to(device)
        loss, logits, hidden = score_window(model, input_ids, trg_len, want_hidden=collect_entropy)
        nlls.append(loss.float().item() * trg_len)
        n_tok += trg_len
        if collect_entropy:
            p = logits[0, -trg_len:].float().softmax(-1)
            entropies.append(-(p * p.clamp_min(1e-12).log()).sum(-1).mean().item())
        # large vocab logits can be several GB for long windows; release eagerly
        del logits, hidden, input_ids, loss
        torch.cuda.empty_cache()
    ppl = math.exp(sum(nlls) / n_tok)
    return ppl, (sum(entropies) / len(entropies) if entropies else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-large")
    ap.add_argument("--dataset", default="wikitext")
    ap.add_argument("--config", default="wikitext-2-raw-v1")
    ap.add_argument("--split", default="test")
    ap.add_argument("--stride", type=int, default=512)
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--entropy", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    device = "cuda"
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=getattr(torch, args.dtype)).to(device)
    model.eval()
    max_len = args.max_length or model.config.max_position_embeddings
    enc = encode_corpus(tok, args.dataset, args.config, args.split)

    t0 = time.time()
    ppl, ent = evaluate(model, enc, device, max_len, args.stride, collect_entropy=args.entropy)
    res = {"model": args.model, "ppl": ppl, "mean_entropy": ent, "stride": args.stride, "max_len": max_len,
           "tokens": enc.size(1), "seconds": round(time.time() - t0, 1)}
    print(json.dumps(res, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    main()
