import torch
import torch.nn as nn
import torch.nn.functional as F

FAILED_STEPS = []


def forward_backward(model, batch, accum_steps):
    images, captions = batch["pixel_values"].cuda(), batch["input_ids"].cuda()
    out = model(images, captions[:, :-1])
    loss = F.cross_entropy(out.flatten(0, 1), captions[:, 1:].flatten()) / accum_steps
    loss.backward()
    return loss.detach()


def train_captioner(model, loader, optimizer, accum_steps=4, max_steps=50000):
    model.train()
    step = 0
    for batch in loader:
        try:
            loss = forward_backward(model, batch, accum_steps)
        except torch.cuda.OutOfMemoryError as err:
            FAILED_STEPS.append((step, batch["pixel_values"].shape, err))  # leak
            optimizer.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            continue
        step += 1
        if step % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if step >= max_steps:
            break
    print(f"finished {step} steps, {len(FAILED_STEPS)} OOM batches skipped")
