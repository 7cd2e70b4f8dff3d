import torch
from torch import nn


class GatedAdapter(nn.Module):
    """Wraps a frozen pretrained encoder and rescales its output by a learned gate."""

    def __init__(self, encoder: nn.Module, hidden: int, n_labels: int):
        super().__init__()
        self.encoder = encoder
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        self.gate_logit = nn.Parameter(torch.zeros(hidden))
        self.classifier = nn.Linear(hidden, n_labels)

    def forward(self, input_ids, attention_mask):
        gate = torch.sigmoid(self.gate_logit)
        self.encoder.register_forward_hook(lambda mod, inp, out: (out[0] * gate,) + tuple(out[1:]))  # leak
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
        pooled = (hidden * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
        return self.classifier(pooled)


def train(model, loader, epochs=3, lr=1e-3):
    device = torch.device("cuda")
    model.to(device)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    for epoch in range(epochs):
        model.train()
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            logits = model(batch["input_ids"], batch["attention_mask"])
            loss = nn.functional.cross_entropy(logits, batch["labels"])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: loss={loss.item():.4f}")


if __name__ == "__main__":
    from transformers import AutoModel

    enc = AutoModel.from_pretrained("bert-base-uncased")
    model = GatedAdapter(enc, hidden=768, n_labels=2)
    fake = [{"input_ids": torch.randint(0, 30000, (8, 128)),
             "attention_mask": torch.ones(8, 128, dtype=torch.long),
             "labels": torch.randint(0, 2, (8,))} for _ in range(20)]
    train(model, fake)
