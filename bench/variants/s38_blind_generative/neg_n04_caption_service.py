"""Caption predictor used by the captioning API: encoder-decoder with batched beam search."""
import logging
from typing import List

import torch
import torch.nn.functional as F
from PIL import Image
from transformers import AutoImageProcessor, AutoTokenizer, VisionEncoderDecoderModel

logger = logging.getLogger(__name__)


class CaptionPredictor:
    def __init__(self, checkpoint: str, device: str = "cuda", beam_size: int = 4, max_len: int = 32):
        self.device = torch.device(device)
        self.model = VisionEncoderDecoderModel.from_pretrained(checkpoint).to(self.device).eval()
        self.processor = AutoImageProcessor.from_pretrained(checkpoint)
        self.tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        self.beam_size = beam_size
        self.max_len = max_len
        cfg = self.model.config
        self.bos = cfg.decoder_start_token_id
        self.eos = cfg.eos_token_id if cfg.eos_token_id is not None else self.tokenizer.eos_token_id

    @torch.no_grad()
    def _beam_search(self, pixel_values: torch.Tensor, length_penalty: float = 1.0) -> torch.Tensor:
        B, K = pixel_values.size(0), self.beam_size
        enc = self.model.encoder(pixel_values=pixel_values).last_hidden_state
        enc = enc.repeat_interleave(K, dim=0)
        seqs = torch.full((B * K, 1), self.bos, dtype=torch.long, device=self.device)
        scores = torch.zeros(B, K, device=self.device)
        scores[:, 1:] = float("-inf")
        done = torch.zeros(B * K, dtype=torch.bool, device=self.device)
        for _ in range(self.max_len):
            out = self.model.decoder(input_ids=seqs, encoder_hidden_states=enc)
            log_probs = F.log_softmax(out.logits[:, -1].float(), dim=-1)
            V = log_probs.size(-1)
            log_probs[done] = float("-inf")
            log_probs[done, self.eos] = 0.0
            cand = (scores.view(-1, 1) + log_probs).view(B, K * V)
            scores, flat_idx = cand.topk(K, dim=-1)
            beam_idx = (flat_idx // V) + torch.arange(B, device=self.device).unsqueeze(1) * K
            tok = (flat_idx % V).view(-1, 1)
            seqs = torch.cat([seqs[beam_idx.view(-1)], tok], dim=1)
            done = done[beam_idx.view(-1)] | (tok.view(-1) == self.eos)
            if bool(done.all()):
                break
        lengths = ((seqs != self.eos).sum(1).float()).view(B, K)
        normed = scores / lengths.pow(length_penalty)
        best = normed.argmax(dim=1) + torch.arange(B, device=self.device) * K
        return seqs[best]

    def predict(self, images: List[Image.Image]) -> List[str]:
        inputs = self.processor(images=[im.convert("RGB") for im in images], return_tensors="pt")
        pixel_values = inputs.pixel_values.to(self.device, non_blocking=True)
        tokens = self._beam_search(pixel_values).cpu()
        captions = self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
        logger.info("captioned %d images", len(captions))
        return [c.strip() for c in captions]


def handler(predictor: CaptionPredictor, request: dict) -> dict:
    paths = request.get("images", [])
    images = [Image.open(p) for p in paths]
    try:
        return {"captions": predictor.predict(images)}
    finally:
        for im in images:
            im.close()


if __name__ == "__main__":
    import sys

    pred = CaptionPredictor(sys.argv[1])
    print(handler(pred, {"images": sys.argv[2:]}))
