"""LoRA fine-tuning of a Stable Diffusion UNet on an image/caption folder."""
import argparse
import math
import os

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from peft import LoraConfig
from peft.utils import get_peft_model_state_dict
from transformers import CLIPTextModel, CLIPTokenizer

from data import CaptionImageDataset, make_loader


class LoRATrainer:
    def __init__(self, args):
        self.args = args
        self.device = torch.device("cuda")
        mid = args.pretrained
        self.tokenizer = CLIPTokenizer.from_pretrained(mid, subfolder="tokenizer")
        self.text_encoder = CLIPTextModel.from_pretrained(mid, subfolder="text_encoder").to(self.device)
        self.vae = AutoencoderKL.from_pretrained(mid, subfolder="vae").to(self.device)
        self.unet = UNet2DConditionModel.from_pretrained(mid, subfolder="unet").to(self.device)
        self.noise_scheduler = DDPMScheduler.from_pretrained(mid, subfolder="scheduler")
        for m in (self.text_encoder, self.vae, self.unet):
            m.requires_grad_(False)
        self.unet.add_adapter(LoraConfig(r=args.rank, lora_alpha=args.rank, init_lora_weights="gaussian",
                                         target_modules=["to_k", "to_q", "to_v", "to_out.0"]))
        self.params = [p for p in self.unet.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=args.lr, weight_decay=1e-2)
        self.global_step = 0
        self._pending_metrics = []

    def training_step(self, batch):
        pixels = batch["pixel_values"].to(self.device, non_blocking=True)
        ids = batch["input_ids"].to(self.device, non_blocking=True)
        with torch.no_grad():
            latents = self.vae.encode(pixels).latent_dist.sample() * self.vae.config.scaling_factor
            cond = self.text_encoder(ids)[0]
        noise = torch.randn_like(latents)
        t = torch.randint(0, self.noise_scheduler.config.num_train_timesteps, (latents.size(0),),
                          device=self.device)
        noisy = self.noise_scheduler.add_noise(latents, noise, t)
        pred = self.unet(noisy, t, encoder_hidden_states=cond).sample
        loss = F.mse_loss(pred.float(), noise.float())
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.opt.step()
        self.global_step += 1
        self._pending_metrics.append((self.global_step, lambda: loss.detach().float().item()))  # leak

    def maybe_log(self):
        if self.global_step % self.args.log_every != 0:
            return
        recent = self._pending_metrics[-self.args.log_every:]
        values = [fn() for _, fn in recent]
        print(f"step {self.global_step} loss {sum(values) / len(values):.5f} "
              f"lr {self.opt.param_groups[0]['lr']:.2e}")

    def save(self, tag: str):
        path = os.path.join(self.args.output_dir, f"lora_{tag}.pt")
        torch.save(get_peft_model_state_dict(self.unet), path)

    def fit(self, loader):
        epochs = math.ceil(self.args.max_steps / len(loader))
        self.unet.train()
        for _ in range(epochs):
            for batch in loader:
                self.training_step(batch)
                self.maybe_log()
                if self.global_step % self.args.save_every == 0:
                    self.save(f"{self.global_step:06d}")
                if self.global_step >= self.args.max_steps:
                    self.save("final")
                    return


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="runwayml/stable-diffusion-v1-5")
    ap.add_argument("--train_dir", required=True)
    ap.add_argument("--output_dir", default="lora-out")
    ap.add_argument("--resolution", type=int, default=512)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--max_steps", type=int, default=15000)
    ap.add_argument("--log_every", type=int, default=50)
    ap.add_argument("--save_every", type=int, default=2500)
    return ap.parse_args()


if __name__ == "__main__":
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    trainer = LoRATrainer(args)
    ds = CaptionImageDataset(args.train_dir, trainer.tokenizer, resolution=args.resolution)
    trainer.fit(make_loader(ds, batch_size=args.batch_size, num_workers=4))
