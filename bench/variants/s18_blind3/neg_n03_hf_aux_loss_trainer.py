"""Trainer subclass that adds a z-loss on router logits and reports it in the logs."""
from typing import Dict, Optional

import torch
from transformers import Trainer
from transformers.utils import logging

logger = logging.get_logger(__name__)


def router_z_loss(router_logits):
    # router_logits: tuple of [batch*seq, n_experts] per layer
    stacked = torch.cat([r.float() for r in router_logits], dim=0)
    return torch.logsumexp(stacked, dim=-1).pow(2).mean()


class MoETrainer(Trainer):
    def __init__(self, *args, z_loss_coef: float = 1e-3, aux_loss_coef: float = 1e-2, **kwargs):
        super().__init__(*args, **kwargs)
        self.z_loss_coef = z_loss_coef
        self.aux_loss_coef = aux_loss_coef
        self._extra_losses: Dict[str, list] = {"z_loss": [], "aux_loss": []}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs, output_router_logits=True)
        loss = outputs.loss
        extras = {}
        if getattr(outputs, "router_logits", None) is not None:
            extras["z_loss"] = router_z_loss(outputs.router_logits)
            loss = loss + self.z_loss_coef * extras["z_loss"]
        if getattr(outputs, "aux_loss", None) is not None:
            extras["aux_loss"] = outputs.aux_loss
        if model.training:
            self._record(extras)
        return (loss, outputs) if return_outputs else loss

    def _record(self, extras):
        for name, value in extras.items():
            self._extra_losses.setdefault(name, []).append(value.detach().float().item())

    def log(self, logs: Dict[str, float], start_time: Optional[float] = None) -> None:
        if "loss" in logs:
            for name, values in self._extra_losses.items():
                if values:
                    logs[name] = round(sum(values) / len(values), 6)
                    values.clear()
        if start_time is not None:
            super().log(logs, start_time)
        else:
            super().log(logs)


def build_trainer(model, tokenizer, train_ds, eval_ds, args, collator):
    trainer = MoETrainer(
        model=model,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        tokenizer=tokenizer,
        data_collator=collator,
        z_loss_coef=1e-3,
    )
    logger.info("built MoETrainer with z_loss_coef=%s", trainer.z_loss_coef)
    return trainer
