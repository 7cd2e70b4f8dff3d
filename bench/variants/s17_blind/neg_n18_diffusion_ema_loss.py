import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler, UNet2DModel


class SmoothedLoss:
    def __init__(self, beta=0.98):
        self.beta = beta
        self.value = None

    def update(self, loss):
        loss = float(loss)
        if self.value is None:
            self.value = loss
        else:
            self.value = self.beta * self.value + (1 - self.beta) * loss
        return self.value


def train_ddpm(dataloader, num_epochs=100, lr=1e-4, image_size=64):
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=1)
    model = UNet2DModel(
        sample_size=image_size, in_channels=3, out_channels=3,
        block_out_channels=(128, 128, 256, 256, 512, 512),
    )
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)
    smooth = SmoothedLoss()
    global_step = 0
    for epoch in range(num_epochs):
        for batch in dataloader:
            clean = batch["images"]
            noise = torch.randn_like(clean)
            t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (clean.shape[0],),
                              device=clean.device).long()
            noisy = noise_scheduler.add_noise(clean, noise, t)
            with accelerator.accumulate(model):
                pred = model(noisy, t, return_dict=False)[0]
                loss = F.mse_loss(pred, noise)
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
            v = smooth.update(loss.detach())
            if global_step % 100 == 0 and accelerator.is_main_process:
                print(f"step {global_step} loss {v:.4f} (log {math.log(max(v, 1e-8)):.2f})")
            global_step += 1
    return accelerator.unwrap_model(model)
