class BaseTrainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader

    def compute_loss(self, batch):
        outputs = self.model(**batch)
        return outputs["loss"], outputs["logits"]


class Trainer(BaseTrainer):
    def train(self):
        epoch_loss = 0
        for batch in self.loader:
            loss, logits = self.compute_loss(batch)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            epoch_loss += loss * batch["input_ids"].size(0)  # leak
        return epoch_loss
