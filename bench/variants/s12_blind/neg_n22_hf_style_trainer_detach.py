from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader


@dataclass
class TrainingArguments:
    num_train_epochs: int = 3
    learning_rate: float = 5e-5
    logging_steps: int = 50
    max_grad_norm: float = 1.0


@dataclass
class TrainerState:
    global_step: int = 0
    epoch: float = 0.0


class MiniTrainer:
    def __init__(self, model, args: TrainingArguments, train_dataset, data_collator=None) -> None:
        self.model = model.cuda()
        self.args = args
        self.state = TrainerState()
        self.loader = DataLoader(train_dataset, batch_size=16, shuffle=True, collate_fn=data_collator)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=args.learning_rate)

    def training_step(self, inputs: dict) -> torch.Tensor:
        self.model.train()
        inputs = {k: v.cuda() for k, v in inputs.items()}
        loss = self.model(**inputs).loss
        loss.backward()
        return loss.detach()

    def train(self) -> float:
        tr_loss = torch.tensor(0.0, device="cuda")
        total_loss_scalar = 0.0
        for epoch in range(self.args.num_train_epochs):
            for step, inputs in enumerate(self.loader):
                tr_loss_step = self.training_step(inputs)
                tr_loss += tr_loss_step
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.state.global_step += 1
                if self.state.global_step % self.args.logging_steps == 0:
                    tr_loss_scalar = tr_loss.item()
                    tr_loss -= tr_loss
                    total_loss_scalar += tr_loss_scalar
                    print({"loss": tr_loss_scalar / self.args.logging_steps, "step": self.state.global_step})
            self.state.epoch = epoch + 1
        total_loss_scalar += tr_loss.item()
        return total_loss_scalar / max(self.state.global_step, 1)
