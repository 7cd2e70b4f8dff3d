"""ViT fine-tuning with deferred attention-map rendering to TensorBoard."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


def plot_attention(attn, patch_grid):
    # attn: [heads, tokens, tokens]; visualise CLS -> patch attention averaged over heads
    cls_attn = attn.mean(0)[0, 1:].reshape(patch_grid, patch_grid)
    fig, ax = plt.subplots(figsize=(3, 3))
    ax.imshow(cls_attn, cmap="viridis")
    ax.axis("off")
    return fig


class ViTFinetuner:
    def __init__(self, model, loader, lr=1e-4, plot_every=500, device="cuda", log_dir="runs/vit"):
        self.model = model.to(device)
        self.loader = loader
        self.device = device
        self.plot_every = plot_every
        self.writer = SummaryWriter(log_dir)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
        self.scaler = torch.cuda.amp.GradScaler()
        self._render_queue = []
        self.step = 0

    def _queue_attention_plot(self, attn):
        step = self.step
        grid = int((attn.size(-1) - 1) ** 0.5)
        attn_np = attn[0].float().detach().cpu().numpy()

        def _render():
            fig = plot_attention(attn_np, grid)
            self.writer.add_figure("attention/cls", fig, step)
            plt.close(fig)

        self._render_queue.append(_render)

    def flush_renders(self):
        for fn in self._render_queue:
            fn()
        self._render_queue.clear()
        self.writer.flush()

    def train_step(self, images, labels):
        with torch.autocast("cuda", dtype=torch.float16):
            logits, attn = self.model(images, return_last_attention=True)
            loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss, attn

    def fit(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            for images, labels in self.loader:
                images = images.to(self.device, non_blocking=True)
                labels = labels.to(self.device, non_blocking=True)
                loss, attn = self.train_step(images, labels)
                self.step += 1
                if self.step % self.plot_every == 0:
                    self._queue_attention_plot(attn)
                    self.writer.add_scalar("train/loss", loss.item(), self.step)
            self.flush_renders()
        self.writer.close()
