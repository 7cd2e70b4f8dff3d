import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, train_dataloader, max_steps=10000, log_every=50):
        self.model = model
        self.optimizer = optimizer
        self.train_dataloader = train_dataloader
        self.max_steps = max_steps
        self.log_every = log_every
        self.global_step = 0

    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs)
        loss = outputs["loss"]
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()
        return loss.detach()

    def train(self):
        while self.global_step < self.max_steps:
            for inputs in self.train_dataloader:
                tr_loss = self.training_step(self.model, inputs)
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
                if self.global_step % self.log_every == 0:
                    print(f"step {self.global_step} loss {tr_loss.item():.4f}")
                if self.global_step >= self.max_steps:
                    break


class DistillationTrainer(Trainer):
    def __init__(self, *args, teacher_model=None, temperature=2.0, alpha=0.5, **kwargs):
        super().__init__(*args, **kwargs)
        self.teacher = teacher_model.eval()
        self.temperature = temperature
        self.alpha = alpha
        self.student_logits_log = []

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        student_out = model(**inputs)
        with torch.no_grad():
            teacher_out = self.teacher(**inputs)

        s_logits = student_out["logits"]
        t_logits = teacher_out["logits"]
        ce = F.cross_entropy(s_logits, labels)
        kd = F.kl_div(
            F.log_softmax(s_logits / self.temperature, dim=-1),
            F.softmax(t_logits / self.temperature, dim=-1),
            reduction="batchmean",
        ) * self.temperature ** 2
        loss = self.alpha * ce + (1.0 - self.alpha) * kd

        self.student_logits_log.append({"step": self.global_step, "logits": s_logits})  # leak
        return (loss, student_out) if return_outputs else loss
