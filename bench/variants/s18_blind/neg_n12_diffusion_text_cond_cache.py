"""Text-conditioned latent diffusion fine-tuning (UNet only, frozen CLIP + VAE).

The CLIP text encoder is frozen; only the empty-prompt embedding used for
classifier-free-guidance dropout is cached, captions are encoded per batch.
"""
import argparse
import logging
import math
import os
from typing import List

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from transformers import CLIPTextModel, CLIPTokenizer

logger = logging.getLogger(__name__)


class PromptEncoder:
    def __init__(self, tokenizer: CLIPTokenizer, text_encoder: CLIPTextModel, device):
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder.eval().requires_grad_(False)
        self.device = device
        self._uncond: torch.Tensor = None

    @torch.no_grad()
    def _encode(self, prompts: List[str]) -> torch.Tensor:
        ids = self.tokenizer(
            prompts,
            padding="max_length",
            max_length=self.tokenizer.model_max_length,
            truncation=True,
            return_tensors="pt",
        ).input_ids.to(self.device)
        return self.text_encoder(ids)[0]

    def uncond(self) -> torch.Tensor:
        if self._uncond is None:
            self._uncond = self._encode([""])[0]
        return self._uncond

    def __call__(self, prompts: List[str]) -> torch.Tensor:
        real = [p for p in prompts if p]
        enc = iter(self._encode(real)) if real else iter(())
        return torch.stack([next(enc) if p else self.uncond() for p in prompts])


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="runwayml/stable-diffusion-v1-5")
    ap.add_argument("--train_data", required=True)
    ap.add_argument("--resolution", type=int, default=512)
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--max_steps", type=int, default=20000)
    ap.add_argument("--snr_gamma", type=float, default=None)
    ap.add_argument("--uncond_prob", type=float, default=0.1)
    ap.add_argument("--output_dir", default="sd-finetune")
    return ap.parse_args()


def snr_weights(scheduler, timesteps, gamma):
    alphas_cumprod = scheduler.alphas_cumprod.to(timesteps.device)
    snr = alphas_cumprod[timesteps] / (1 - alphas_cumprod[timesteps])
    return torch.clamp(gamma / snr, max=1.0)


def train(args, dataloader):
    device = torch.device("cuda")
    tok = CLIPTokenizer.from_pretrained(args.pretrained, subfolder="tokenizer")
    te = CLIPTextModel.from_pretrained(args.pretrained, subfolder="text_encoder").to(device)
    vae = AutoencoderKL.from_pretrained(args.pretrained, subfolder="vae").to(device).requires_grad_(False)
    unet = UNet2DConditionModel.from_pretrained(args.pretrained, subfolder="unet").to(device)
    noise_sched = DDPMScheduler.from_pretrained(args.pretrained, subfolder="scheduler")
    unet.enable_gradient_checkpointing()
    unet.train()

    encode_prompts = PromptEncoder(tok, te, device)
    opt = torch.optim.AdamW(unet.parameters(), lr=args.lr, weight_decay=1e-2)
    step = 0
    while step < args.max_steps:
        for batch in dataloader:
            pixels = batch["pixel_values"].to(device, dtype=torch.float32)
            captions = [c if torch.rand(()) > args.uncond_prob else "" for c in batch["caption"]]
            with torch.no_grad():
                latents = vae.encode(pixels).latent_dist.sample() * vae.config.scaling_factor
            cond = encode_prompts(captions)

            noise = torch.randn_like(latents)
            t = torch.randint(0, noise_sched.config.num_train_timesteps, (latents.shape[0],), device=device)
            noisy = noise_sched.add_noise(latents, noise, t)
            pred = unet(noisy, t, encoder_hidden_states=cond).sample

            if args.snr_gamma is None:
                loss = F.mse_loss(pred.float(), noise.float())
            else:
                w = snr_weights(noise_sched, t, args.snr_gamma)
                loss = (F.mse_loss(pred.float(), noise.float(), reduction="none").mean(dim=(1, 2, 3)) * w).mean()

            loss.backward()
            torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % 100 == 0:
                logger.info("step %d loss %.5f", step, loss.item())
            if step % 5000 == 0:
                unet.save_pretrained(os.path.join(args.output_dir, f"checkpoint-{step}"))
            if step >= args.max_steps:
                break
    unet.save_pretrained(os.path.join(args.output_dir, "final"))


if __name__ == "__main__":
    from torch.utils.data import DataLoader
    from my_datasets import CaptionedImageFolder  # project-local

    a = parse_args()
    logging.basicConfig(level=logging.INFO)
    ds = CaptionedImageFolder(a.train_data, resolution=a.resolution)
    train(a, DataLoader(ds, batch_size=a.batch_size, shuffle=True, num_workers=4, drop_last=True))
