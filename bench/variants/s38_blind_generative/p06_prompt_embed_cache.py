"""SDXL-style predictor for the image API, with reuse of prompt encodings across requests."""
import base64
import hashlib
import io
import logging
from typing import Dict, Optional, Tuple

import torch
from diffusers import StableDiffusionPipeline
from pydantic import BaseModel

log = logging.getLogger("predictor")


class GenerateRequest(BaseModel):
    prompt: str
    negative_prompt: str = ""
    num_inference_steps: int = 30
    guidance_scale: float = 7.5
    seed: Optional[int] = None
    width: int = 512
    height: int = 512


class Predictor:
    def __init__(self, model_id: str = "runwayml/stable-diffusion-v1-5", device: str = "cuda"):
        self.device = device
        self.pipe = StableDiffusionPipeline.from_pretrained(model_id, torch_dtype=torch.float16,
                                                            safety_checker=None)
        self.pipe.to(device)
        self.pipe.set_progress_bar_config(disable=True)
        self._prompt_cache: Dict[str, Tuple[torch.Tensor, torch.Tensor]] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(prompt: str, negative: str) -> str:
        return hashlib.sha1(f"{prompt}\x00{negative}".encode()).hexdigest()

    @torch.inference_mode()
    def _encode(self, prompt: str, negative: str) -> Tuple[torch.Tensor, torch.Tensor]:
        key = self._key(prompt, negative)
        cached = self._prompt_cache.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        prompt_embeds, negative_embeds = self.pipe.encode_prompt(
            prompt,
            device=self.device,
            num_images_per_prompt=1,
            do_classifier_free_guidance=True,
            negative_prompt=negative or None,
        )
        self._prompt_cache[key] = (prompt_embeds, negative_embeds)  # leak
        return prompt_embeds, negative_embeds

    @torch.inference_mode()
    def predict(self, req: GenerateRequest) -> str:
        prompt_embeds, negative_embeds = self._encode(req.prompt, req.negative_prompt)
        generator = None
        if req.seed is not None:
            generator = torch.Generator(device=self.device).manual_seed(req.seed)
        image = self.pipe(
            prompt_embeds=prompt_embeds,
            negative_prompt_embeds=negative_embeds,
            num_inference_steps=req.num_inference_steps,
            guidance_scale=req.guidance_scale,
            width=req.width,
            height=req.height,
            generator=generator,
        ).images[0]
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        if (self.hits + self.misses) % 100 == 0:
            log.info("prompt cache hits=%d misses=%d", self.hits, self.misses)
        return base64.b64encode(buf.getvalue()).decode()


def create_app(predictor: Optional[Predictor] = None):
    from fastapi import FastAPI

    app = FastAPI()
    state = {"predictor": predictor}

    @app.on_event("startup")
    def _load():
        if state["predictor"] is None:
            state["predictor"] = Predictor()

    @app.post("/generate")
    def generate(req: GenerateRequest):
        return {"image": state["predictor"].predict(req)}

    @app.get("/healthz")
    def health():
        return {"ok": state["predictor"] is not None}

    return app
