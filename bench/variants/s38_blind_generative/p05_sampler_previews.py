"""Text-to-image generation worker with live progress previews for the web UI."""
import io
import threading
import time
from typing import Optional

import torch
from diffusers import AutoencoderKL, DPMSolverMultistepScheduler, UNet2DConditionModel
from PIL import Image
from transformers import CLIPTextModel, CLIPTokenizer


class GenerationWorker:
    def __init__(self, model_dir: str, device: str = "cuda", dtype=torch.float16):
        self.device = torch.device(device)
        self.dtype = dtype
        self.tokenizer = CLIPTokenizer.from_pretrained(model_dir, subfolder="tokenizer")
        self.text_encoder = CLIPTextModel.from_pretrained(model_dir, subfolder="text_encoder",
                                                          torch_dtype=dtype).to(self.device)
        self.unet = UNet2DConditionModel.from_pretrained(model_dir, subfolder="unet",
                                                         torch_dtype=dtype).to(self.device)
        self.vae = AutoencoderKL.from_pretrained(model_dir, subfolder="vae", torch_dtype=dtype).to(self.device)
        self.scheduler = DPMSolverMultistepScheduler.from_pretrained(model_dir, subfolder="scheduler")
        self.previews = []
        self.progress = 0.0
        self._lock = threading.Lock()

    @torch.inference_mode()
    def _encode(self, prompt: str, negative: str) -> torch.Tensor:
        ids = self.tokenizer([negative, prompt], padding="max_length", truncation=True,
                             max_length=self.tokenizer.model_max_length, return_tensors="pt").input_ids
        return self.text_encoder(ids.to(self.device))[0]

    @torch.inference_mode()
    def _decode(self, latents: torch.Tensor) -> Image.Image:
        img = self.vae.decode(latents / self.vae.config.scaling_factor).sample
        img = (img / 2 + 0.5).clamp(0, 1)[0].permute(1, 2, 0).float().cpu().numpy()
        return Image.fromarray((img * 255).round().astype("uint8"))

    @torch.inference_mode()
    def generate(self, prompt: str, negative: str = "", steps: int = 25, cfg: float = 7.0,
                 height: int = 512, width: int = 512, seed: Optional[int] = None) -> Image.Image:
        gen = torch.Generator(device=self.device)
        gen.manual_seed(seed if seed is not None else int(time.time()))
        emb = self._encode(prompt, negative)
        self.scheduler.set_timesteps(steps, device=self.device)
        latents = torch.randn((1, self.unet.config.in_channels, height // 8, width // 8),
                              generator=gen, device=self.device, dtype=self.dtype)
        latents = latents * self.scheduler.init_noise_sigma
        for i, t in enumerate(self.scheduler.timesteps):
            model_in = self.scheduler.scale_model_input(torch.cat([latents] * 2), t)
            noise_uncond, noise_text = self.unet(model_in, t, encoder_hidden_states=emb).sample.chunk(2)
            noise = noise_uncond + cfg * (noise_text - noise_uncond)
            latents = self.scheduler.step(noise, t, latents).prev_sample
            with self._lock:
                self.previews.append(latents.detach())  # leak
                self.progress = (i + 1) / steps
        return self._decode(latents)

    def latest_preview(self) -> Optional[bytes]:
        with self._lock:
            if not self.previews:
                return None
            latents = self.previews[-1]
        small = torch.nn.functional.interpolate(latents.float(), scale_factor=0.5)
        rgb = small[0, :3].clamp(-1, 1).add(1).mul(127.5).byte().permute(1, 2, 0).cpu().numpy()
        buf = io.BytesIO()
        Image.fromarray(rgb).save(buf, format="JPEG", quality=70)
        return buf.getvalue()


_worker: Optional[GenerationWorker] = None


def get_worker(model_dir: str) -> GenerationWorker:
    global _worker
    if _worker is None:
        _worker = GenerationWorker(model_dir)
    return _worker


def handle_request(payload: dict, model_dir: str = "/models/sd-1-5") -> bytes:
    worker = get_worker(model_dir)
    image = worker.generate(payload["prompt"], payload.get("negative_prompt", ""),
                            steps=int(payload.get("steps", 25)), cfg=float(payload.get("cfg", 7.0)),
                            seed=payload.get("seed"))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
