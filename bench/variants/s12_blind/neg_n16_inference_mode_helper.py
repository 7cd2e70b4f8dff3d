import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_loss(model: nn.Module, batch: dict, alpha: float = 0.5) -> torch.Tensor:
    logits = model(batch["x"].cuda())
    target = batch["y"].cuda()
    teacher = batch["teacher_logits"].cuda()
    ce = F.cross_entropy(logits, target)
    kd = F.kl_div(F.log_softmax(logits / 2.0, -1), F.softmax(teacher / 2.0, -1), reduction="batchmean")
    return (1 - alpha) * ce + alpha * kd * 4.0


@torch.inference_mode()
def evaluate(model: nn.Module, loader) -> float:
    model.eval()
    epoch_loss = torch.zeros((), device="cuda")
    n = 0
    for batch in loader:
        epoch_loss = epoch_loss + compute_loss(model, batch)
        n += 1
    return (epoch_loss / max(n, 1)).item()


def train_one_epoch(model, loader, optimizer) -> float:
    model.train()
    total, n = 0.0, 0
    for batch in loader:
        loss = compute_loss(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += float(loss)
        n += 1
    return total / max(n, 1)


def main(student: nn.Module, train_loader, val_loader, epochs: int = 30) -> None:
    student = student.cuda()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    for epoch in range(epochs):
        tr = train_one_epoch(student, train_loader, optimizer)
        va = evaluate(student, val_loader)
        print(f"epoch {epoch} train {tr:.4f} val {va:.4f}")
