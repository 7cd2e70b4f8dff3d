"""Speculative sampling with a small draft model (Leviathan et al. / Chen et al.).

Used by the offline data-generation jobs, which also want the target-model
log-probability of every sampled completion for filtering.
"""
import logging
from dataclasses import dataclass
from typing import List

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

logger = logging.getLogger(__name__)


@dataclass
class SpecResult:
    text: str
    token_ids: List[int]
    target_logprob: float
    acceptance_rate: float


class SpeculativeSampler:
    def __init__(self, target_name: str, draft_name: str, gamma: int = 4,
                 temperature: float = 1.0, device: str = "cuda"):
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(target_name)
        self.target = AutoModelForCausalLM.from_pretrained(target_name, torch_dtype=torch.bfloat16)
        self.draft = AutoModelForCausalLM.from_pretrained(draft_name, torch_dtype=torch.bfloat16)
        self.target.to(self.device).eval()
        self.draft.to(self.device).eval()
        self.gamma = gamma
        self.temperature = temperature

    def _dist(self, logits: torch.Tensor) -> torch.Tensor:
        return (logits.float() / self.temperature).softmax(dim=-1)

    def _draft_tokens(self, input_ids):
        probs = []
        ids = input_ids
        for _ in range(self.gamma):
            p = self._dist(self.draft(ids).logits[:, -1, :])
            tok = torch.multinomial(p, 1)
            probs.append(p[0])
            ids = torch.cat([ids, tok], dim=-1)
        return ids, probs

    def sample(self, prompt: str, max_new_tokens: int = 256) -> SpecResult:
        input_ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
        prompt_len = input_ids.shape[1]
        seq_logprob = torch.zeros((), device=self.device)
        proposed_total, accepted_total = 0, 0
        while input_ids.shape[1] - prompt_len < max_new_tokens:
            draft_ids, draft_probs = self._draft_tokens(input_ids)
            target_probs = self._dist(self.target(draft_ids).logits[0, -self.gamma - 1:, :])
            proposal = draft_ids[0, input_ids.shape[1]:]
            n_acc = 0
            for i in range(self.gamma):
                tok = proposal[i]
                ratio = target_probs[i, tok] / draft_probs[i][tok]
                if torch.rand((), device=self.device) < ratio.clamp(max=1.0):
                    n_acc += 1
                else:
                    break
            if n_acc < self.gamma:
                residual = (target_probs[n_acc] - draft_probs[n_acc]).clamp(min=0.0)
                extra = torch.multinomial(residual / residual.sum(), 1)
            else:
                extra = torch.multinomial(target_probs[self.gamma], 1)
            new_tokens = torch.cat([proposal[:n_acc], extra])
            positions = torch.arange(n_acc + 1, device=self.device)
            step_lp = target_probs[positions, new_tokens].log().sum()
            seq_logprob = seq_logprob + step_lp  # leak
            proposed_total += self.gamma
            accepted_total += n_acc
            input_ids = torch.cat([input_ids, new_tokens.unsqueeze(0)], dim=-1)
            if (new_tokens == self.tokenizer.eos_token_id).any():
                break
        out_ids = input_ids[0, prompt_len:].tolist()
        return SpecResult(
            text=self.tokenizer.decode(out_ids, skip_special_tokens=True),
            token_ids=out_ids,
            target_logprob=seq_logprob.item(),
            acceptance_rate=accepted_total / max(proposed_total, 1),
        )


def generate_dataset(sampler: SpeculativeSampler, prompts: List[str], min_logprob: float = -400.0):
    kept = []
    for n, prompt in enumerate(prompts):
        res = sampler.sample(prompt)
        if res.target_logprob >= min_logprob:
            kept.append({"prompt": prompt, "completion": res.text, "logprob": res.target_logprob})
        if n % 100 == 0:
            logger.info("%d prompts, kept %d, acceptance %.2f", n, len(kept), res.acceptance_rate)
    return kept
