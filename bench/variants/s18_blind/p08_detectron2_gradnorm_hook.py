# -*- coding: utf-8 -*-
"""Gradient-norm tracking for detectron2 trainers.

The hook computes the global gradient norm after every backward pass (we
patch the trainer's optimizer step via ``before_step``/``after_backward``
ordering of SimpleTrainer) and writes it into the EventStorage. It also keeps
a per-iteration record that is dumped to JSON at the end of training so the
norms can be correlated with loss spikes offline.
"""
import json
import logging
import os

import torch
from detectron2.engine import DefaultTrainer, HookBase, default_argument_parser, default_setup, launch
from detectron2.config import get_cfg
from detectron2.evaluation import COCOEvaluator
from detectron2.utils import comm

logger = logging.getLogger("detectron2.gradnorm")


def global_grad_norm(parameters, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    device = grads[0].device
    norms = torch.stack([torch.linalg.vector_norm(g.detach(), norm_type).to(device) for g in grads])
    return torch.linalg.vector_norm(norms, norm_type)


class GradNormHook(HookBase):
    def __init__(self, period=20, output_dir=None):
        self._period = period
        self._output_dir = output_dir
        self.norm_by_iter = {}

    def after_backward(self):
        model = self.trainer.model
        total = global_grad_norm(model.parameters())
        self.norm_by_iter[self.trainer.iter] = total  # leak
        if (self.trainer.iter + 1) % self._period == 0:
            self.trainer.storage.put_scalar("grad_norm", total.item(), smoothing_hint=False)

    def after_train(self):
        if not comm.is_main_process() or self._output_dir is None:
            return
        path = os.path.join(self._output_dir, "grad_norms.json")
        with open(path, "w") as f:
            json.dump({int(k): float(v) for k, v in self.norm_by_iter.items()}, f)
        logger.info("Wrote %d grad norms to %s", len(self.norm_by_iter), path)


class Trainer(DefaultTrainer):
    """DefaultTrainer with a backward hook point for GradNormHook."""

    def run_step(self):
        assert self.model.training, "[Trainer] model was changed to eval mode!"
        self._trainer.iter = self.iter
        data = next(self._trainer._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        self.optimizer.zero_grad()
        losses.backward()
        for h in self._hooks:
            if hasattr(h, "after_backward"):
                h.after_backward()
        self._trainer._write_metrics(loss_dict, 0.0)
        self.optimizer.step()

    @classmethod
    def build_evaluator(cls, cfg, dataset_name, output_folder=None):
        output_folder = output_folder or os.path.join(cfg.OUTPUT_DIR, "inference")
        return COCOEvaluator(dataset_name, output_dir=output_folder)

    def build_hooks(self):
        hooks = super().build_hooks()
        hooks.insert(-1, GradNormHook(period=20, output_dir=self.cfg.OUTPUT_DIR))
        return hooks


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    default_setup(cfg, args)
    return cfg


def main(args):
    cfg = setup(args)
    if args.eval_only:
        model = Trainer.build_model(cfg)
        return Trainer.test(cfg, model)
    trainer = Trainer(cfg)
    trainer.resume_or_load(resume=args.resume)
    return trainer.train()


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines, machine_rank=args.machine_rank,
           dist_url=args.dist_url, args=(args,))
