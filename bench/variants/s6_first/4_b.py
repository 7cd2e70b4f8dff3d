import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2SeqValidator:
    def __init__(self, model, loader, pad_id=0, device=torch.device("cuda")):
        self.model = model
        self.loader = loader
        self.pad_id = pad_id
        self.device = device

    def _batch_loss(self, src, tgt):
        logits = self.model(src, tgt[:, :-1])
        return F.cross_entropy(
            logits.reshape(-1, logits.size(-1)),
            tgt[:, 1:].reshape(-1),
            ignore_index=self.pad_id,
        )

    def validate(self):
        self.model.eval()
        losses = []
        for batch in self.loader:
            src = batch["src"].to(self.device)
            tgt = batch["tgt"].to(self.device)
            loss = self._batch_loss(src, tgt)
            losses.append(loss)  # leak
        mean_loss = torch.stack(losses).mean()
        self.model.train()
        return {"val_loss": mean_loss.item(), "val_ppl": mean_loss.exp().item()}
