"""Textual inversion: learn a new token embedding for a concept from a handful of images."""
import argparse
import os
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from transformers import CLIPTextModel, CLIPTokenizer


def print_logger(step: int, metrics: Dict[str, float]):
    print(f"step {step} " + " ".join(f"{k}={v:.5f}" for k, v in metrics.items()))


class TextualInversionTrainer:
    def __init__(self, args, callbacks: List[Callable[[int, Dict[str, float]], None]]):
        self.args = args
        self.device = torch.device("cuda")
        mid = args.pretrained
        self.tokenizer = CLIPTokenizer.from_pretrained(mid, subfolder="tokenizer")
        self.tokenizer.add_tokens([args.placeholder])
        self.token_id = self.tokenizer.convert_tokens_to_ids(args.placeholder)
        init_id = self.tokenizer.encode(args.initializer, add_special_tokens=False)[0]
        self.text_encoder = CLIPTextModel.from_pretrained(mid, subfolder="text_encoder")
        self.text_encoder.resize_token_embeddings(len(self.tokenizer))
        emb = self.text_encoder.get_input_embeddings().weight
        with torch.no_grad():
            emb[self.token_id] = emb[init_id].clone()
        self.orig_emb = emb.detach().clone()
        self.text_encoder.to(self.device)
        self.vae = AutoencoderKL.from_pretrained(mid, subfolder="vae").to(self.device).requires_grad_(False)
        self.unet = UNet2DConditionModel.from_pretrained(mid, subfolder="unet").to(self.device).requires_grad_(False)
        self.sched = DDPMScheduler.from_pretrained(mid, subfolder="scheduler")
        self.text_encoder.requires_grad_(False)
        self.text_encoder.get_input_embeddings().weight.requires_grad_(True)
        self.opt = torch.optim.AdamW([self.text_encoder.get_input_embeddings().weight], lr=args.lr)
        self.callbacks = callbacks
        self.loss_sum = torch.zeros((), device=self.device)
        self.loss_count = 0

    def _loss(self, pixels, ids):
        with torch.no_grad():
            latents = self.vae.encode(pixels).latent_dist.sample() * self.vae.config.scaling_factor
        noise = torch.randn_like(latents)
        t = torch.randint(0, self.sched.config.num_train_timesteps, (latents.size(0),), device=self.device)
        cond = self.text_encoder(ids)[0]
        pred = self.unet(self.sched.add_noise(latents, noise, t), t, encoder_hidden_states=cond).sample
        return F.mse_loss(pred.float(), noise.float())

    def step(self, batch, step: int):
        pixels = batch["pixel_values"].to(self.device)
        ids = batch["input_ids"].to(self.device)
        micro = pixels.size(0) // self.args.grad_accum
        total = 0.0
        for i in range(self.args.grad_accum):
            sl = slice(i * micro, (i + 1) * micro)
            total = total + self._loss(pixels[sl], ids[sl]) / self.args.grad_accum
        self.opt.zero_grad(set_to_none=True)
        total.backward()
        self.opt.step()
        with torch.no_grad():
            keep = torch.ones(self.orig_emb.size(0), dtype=torch.bool, device=self.orig_emb.device)
            keep[self.token_id] = False
            w = self.text_encoder.get_input_embeddings().weight
            w[keep] = self.orig_emb[keep].to(w.device)
        self.loss_sum += total.detach()
        self.loss_count += 1
        if step % self.args.log_every == 0:
            metrics = {"loss": (self.loss_sum / self.loss_count).item()}
            self.loss_sum.zero_()
            self.loss_count = 0
            for cb in self.callbacks:
                cb(step, metrics)

    def save(self, path: str):
        vec = self.text_encoder.get_input_embeddings().weight[self.token_id].detach().cpu()
        torch.save({self.args.placeholder: vec}, path)


if __name__ == "__main__":
    from data import ConceptDataset, make_loader

    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="runwayml/stable-diffusion-v1-5")
    ap.add_argument("--data", required=True)
    ap.add_argument("--placeholder", default="<my-concept>")
    ap.add_argument("--initializer", default="toy")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--grad_accum", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--log_every", type=int, default=50)
    args = ap.parse_args()
    trainer = TextualInversionTrainer(args, callbacks=[print_logger])
    loader = make_loader(ConceptDataset(args.data, trainer.tokenizer, args.placeholder), batch_size=8)
    step = 0
    while step < args.steps:
        for batch in loader:
            step += 1
            trainer.step(batch, step)
            if step >= args.steps:
                break
    trainer.save(os.path.join("out", "learned_embeds.pt"))
