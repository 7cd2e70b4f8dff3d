"""Image captioning: ViT encoder + transformer decoder, with beam-search decoding for eval."""
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import AutoTokenizer, ViTModel


class CaptionDecoder(nn.Module):
    def __init__(self, vocab_size: int, d_model: int = 768, n_layers: int = 6, n_heads: int = 12,
                 max_len: int = 64):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerDecoderLayer(d_model, n_heads, 4 * d_model, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerDecoder(layer, n_layers)
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        T = tokens.size(1)
        pos = torch.arange(T, device=tokens.device)
        h = self.tok(tokens) + self.pos(pos)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        h = self.blocks(h, memory, tgt_mask=mask, tgt_is_causal=True)
        return self.head(self.ln(h))


class Captioner(nn.Module):
    def __init__(self, encoder_name: str = "google/vit-base-patch16-224-in21k",
                 tokenizer_name: str = "bert-base-uncased"):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_name)
        self.encoder = ViTModel.from_pretrained(encoder_name)
        self.decoder = CaptionDecoder(self.tokenizer.vocab_size, self.encoder.config.hidden_size)
        self.bos = self.tokenizer.cls_token_id
        self.eos = self.tokenizer.sep_token_id

    def forward(self, pixel_values, input_ids):
        memory = self.encoder(pixel_values=pixel_values).last_hidden_state
        logits = self.decoder(input_ids[:, :-1], memory)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), input_ids[:, 1:].reshape(-1),
                               ignore_index=self.tokenizer.pad_token_id)

    def beam_search(self, pixel_values: torch.Tensor, beam_size: int = 5, max_len: int = 30,
                    length_penalty: float = 0.7) -> List[str]:
        assert pixel_values.size(0) == 1, "beam search decodes one image at a time"
        device = pixel_values.device
        memory = self.encoder(pixel_values=pixel_values).last_hidden_state
        memory = memory.expand(beam_size, -1, -1)
        seqs = torch.full((beam_size, 1), self.bos, dtype=torch.long, device=device)
        beam_scores = torch.zeros(beam_size, device=device)
        beam_scores[1:] = float("-inf")
        finished = []
        for step in range(max_len):
            log_probs = F.log_softmax(self.decoder(seqs, memory)[:, -1], dim=-1)
            cand = beam_scores.unsqueeze(1) + log_probs
            top_scores, top_idx = cand.view(-1).topk(2 * beam_size)
            vocab = log_probs.size(-1)
            beam_idx, tok_idx = top_idx // vocab, top_idx % vocab
            next_seqs, next_scores = [], []
            for s, b, t in zip(top_scores, beam_idx, tok_idx):
                seq = torch.cat([seqs[b], t.view(1)])
                if t.item() == self.eos:
                    finished.append((s.item() / (len(seq) ** length_penalty), seq))
                else:
                    next_seqs.append(seq)
                    next_scores.append(s)
                if len(next_seqs) == beam_size:
                    break
            if len(finished) >= beam_size:
                break
            seqs = torch.stack(next_seqs)
            beam_scores = torch.stack(next_scores)  # leak
        if not finished:
            finished = [(s.item() / (seqs.size(1) ** length_penalty), q) for s, q in zip(beam_scores, seqs)]
        best = max(finished, key=lambda item: item[0])[1]
        return [self.tokenizer.decode(best[1:], skip_special_tokens=True)]


def caption_split(model: Captioner, loader, device, beam_size: int = 5):
    model.eval()
    results = {}
    for batch in loader:
        for image_id, pixels in zip(batch["image_id"], batch["pixel_values"]):
            caption = model.beam_search(pixels.unsqueeze(0).to(device), beam_size=beam_size)[0]
            results[int(image_id)] = caption
    model.train()
    return results
