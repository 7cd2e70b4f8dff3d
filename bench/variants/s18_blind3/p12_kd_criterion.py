"""Knowledge-distillation criterion (fairseq style).

The teacher is frozen; its soft targets are memoised per batch so that
re-running a batch (update_freq > 1 retries, validation passes) is cheap.
"""
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from fairseq import metrics
from fairseq.criterions import FairseqCriterion, register_criterion
from fairseq.dataclass import FairseqDataclass


@dataclass
class KDConfig(FairseqDataclass):
    kd_alpha: float = field(default=0.5, metadata={"help": "weight of the KD term"})
    kd_temperature: float = field(default=2.0, metadata={"help": "softmax temperature"})


@register_criterion("kd_cross_entropy", dataclass=KDConfig)
class KDCrossEntropy(FairseqCriterion):
    def __init__(self, task, kd_alpha, kd_temperature):
        super().__init__(task)
        self.alpha = kd_alpha
        self.T = kd_temperature
        self.teacher = getattr(task, "teacher_model", None)
        self._soft_targets = {}

    @torch.no_grad()
    def _teacher_probs(self, sample):
        key = tuple(sample["id"].tolist())
        hit = self._soft_targets.get(key)
        if hit is not None:
            return hit
        self.teacher.eval()
        t_out = self.teacher(**sample["net_input"])[0]
        probs = F.softmax(t_out.float() / self.T, dim=-1).half()
        self._soft_targets[key] = probs  # leak
        return probs

    def forward(self, model, sample, reduce=True):
        net_output = model(**sample["net_input"])
        lprobs = model.get_normalized_probs(net_output, log_probs=True)
        target = model.get_targets(sample, net_output)
        pad = self.padding_idx
        nll = F.nll_loss(lprobs.view(-1, lprobs.size(-1)), target.view(-1),
                         ignore_index=pad, reduction="sum" if reduce else "none")
        loss = nll
        kd = torch.zeros((), device=lprobs.device)
        if self.teacher is not None and self.alpha > 0:
            t_probs = self._teacher_probs(sample).to(lprobs.dtype)
            s_lprobs = F.log_softmax(net_output[0] / self.T, dim=-1)
            mask = target.ne(pad).unsqueeze(-1)
            kd = -(t_probs * s_lprobs * mask).sum() * self.T ** 2
            loss = (1 - self.alpha) * nll + self.alpha * kd
        ntokens = sample["ntokens"]
        logging_output = {
            "loss": loss.data, "nll_loss": nll.data, "kd_loss": kd.data,
            "ntokens": ntokens, "nsentences": sample["target"].size(0), "sample_size": ntokens,
        }
        return loss, ntokens, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs) -> None:
        loss_sum = sum(log.get("loss", 0) for log in logging_outputs)
        nll_sum = sum(log.get("nll_loss", 0) for log in logging_outputs)
        kd_sum = sum(log.get("kd_loss", 0) for log in logging_outputs)
        ntokens = sum(log.get("ntokens", 0) for log in logging_outputs)
        metrics.log_scalar("loss", loss_sum / ntokens / math.log(2), ntokens, round=3)
        metrics.log_scalar("nll_loss", nll_sum / ntokens / math.log(2), ntokens, round=3)
        metrics.log_scalar("kd_loss", kd_sum / ntokens / math.log(2), ntokens, round=3)

    @staticmethod
    def logging_outputs_can_be_summed() -> bool:
        return True
