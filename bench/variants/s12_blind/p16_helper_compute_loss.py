import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_loss(model: nn.Module, batch: dict, alpha: float = 0.5) -> torch.Tensor:
    """Mixed CE + KD loss against cached teacher logits."""
    logits = model(batch["x"].cuda())
    target = batch["y"].cuda()
    teacher = batch["teacher_logits"].cuda()
    ce = F.cross_entropy(logits, target)
    kd = F.kl_div(F.log_softmax(logits / 2.0, -1), F.softmax(teacher / 2.0, -1), reduction="batchmean")
    return (1 - alpha) * ce + alpha * kd * 4.0


def train_one_epoch(model, loader, optimizer, scaler: torch.cuda.amp.GradScaler) -> float:
    model.train()
    epoch_loss = torch.zeros((), device="cuda")
    n = 0
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = compute_loss(model, batch)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        epoch_loss = epoch_loss + loss  # leak
        n += 1
    return (epoch_loss / max(n, 1)).item()


def main(student: nn.Module, loader, epochs: int = 30) -> None:
    student = student.cuda()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(epochs):
        avg = train_one_epoch(student, loader, optimizer, scaler)
        print(f"epoch {epoch} loss {avg:.4f}")
