import torch as th
import torch.nn as nn
import wandb


def make_model(in_ch=1, n_cls=10):
    return nn.Sequential(
        nn.Conv2d(in_ch, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, n_cls),
    )


def train_epoch(model, loader, opt, device, log_every=100):
    model.train()
    total = 0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = total + loss  # leak
        if (step + 1) % log_every == 0:
            wandb.log({"train/avg_loss": (total / (step + 1)).item()})
    return float(total) / max(1, len(loader))


def main(cfg):
    device = th.device("cuda:0")
    wandb.init(project="mnist-cnn", config=cfg)
    model = make_model().to(device)
    opt = th.optim.Adam(model.parameters(), lr=cfg["lr"])
    from torchvision import datasets, transforms

    ds = datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor())
    loader = th.utils.data.DataLoader(ds, batch_size=cfg["bs"], shuffle=True, num_workers=2)
    for ep in range(cfg["epochs"]):
        avg = train_epoch(model, loader, opt, device)
        print(f"[{ep}] avg loss {avg:.4f}")


if __name__ == "__main__":
    main({"lr": 1e-3, "bs": 128, "epochs": 15})
