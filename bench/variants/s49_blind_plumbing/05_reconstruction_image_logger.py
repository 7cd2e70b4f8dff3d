import torch
import torch.nn.functional as F
import torchvision
from torch.utils.tensorboard import SummaryWriter


class ReconstructionLogger:
    """Collects input/reconstruction pairs and writes an image grid to TensorBoard."""

    def __init__(self, writer: SummaryWriter, every_n_steps=500, max_images=16):
        self.writer = writer
        self.every_n_steps = every_n_steps
        self.max_images = max_images
        self.images = []

    def collect(self, inputs, recon):
        pairs = torch.stack([inputs, recon], dim=1).flatten(0, 1)
        self.images.extend(pairs[: self.max_images])  # leak

    def maybe_log(self, step):
        if step % self.every_n_steps != 0 or not self.images:
            return
        batch = torch.stack(self.images[-self.max_images:]).clamp(0, 1)
        grid = torchvision.utils.make_grid(batch, nrow=8)
        self.writer.add_image("reconstructions", grid, global_step=step)


def train_autoencoder(model, loader, epochs=50, device="cuda", log_dir="runs/ae"):
    writer = SummaryWriter(log_dir)
    image_logger = ReconstructionLogger(writer)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    step = 0
    for epoch in range(epochs):
        for images, _ in loader:
            images = images.to(device)
            recon = model(images)
            loss = F.mse_loss(recon, images)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            image_logger.collect(images, recon.detach())
            image_logger.maybe_log(step)
            writer.add_scalar("train/mse", loss.item(), step)
            step += 1
    writer.close()
