"""Attention map visualisation for HF Trainer runs.

Registers forward hooks on selected self-attention blocks, then renders a grid of
head maps every time the Trainer evaluates. The model has to be created with
``output_attentions=True`` (or ``attn_implementation="eager"``) so that the
attention blocks return their probabilities.
"""
import functools
import logging
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from transformers import TrainerCallback

log = logging.getLogger(__name__)


def plot_heads(maps, title, tokens=None):
    """maps: (heads, q, k) array-like on CPU."""
    n = maps.shape[0]
    cols = min(n, 4)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 3 * rows), squeeze=False)
    for h in range(rows * cols):
        ax = axes[h // cols][h % cols]
        ax.axis("off")
        if h >= n:
            continue
        ax.imshow(maps[h], cmap="viridis", interpolation="nearest")
        ax.set_title(f"head {h}", fontsize=8)
    if tokens is not None and len(tokens) <= 32:
        axes[0][0].set_yticks(range(len(tokens)), labels=tokens, fontsize=6)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


class AttentionObserver:
    """Captures attention probabilities from named submodules."""

    def __init__(self, layer_names, max_heads=4):
        self.layer_names = set(layer_names)
        self.max_heads = max_heads
        self.maps = defaultdict(list)
        self._handles = []

    def _capture(self, name, module, inputs, output):
        if not isinstance(output, tuple) or len(output) < 2 or output[1] is None:
            return
        probs = output[1]
        self.maps[name].append(probs.detach()[0, : self.max_heads])  # leak

    def attach(self, model):
        for name, module in model.named_modules():
            if name in self.layer_names:
                handle = module.register_forward_hook(functools.partial(self._capture, name))
                self._handles.append(handle)
        missing = self.layer_names - {n for n, _ in model.named_modules()}
        if missing:
            log.warning("AttentionObserver: layers not found: %s", sorted(missing))

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles.clear()


class AttentionPlotCallback(TrainerCallback):
    def __init__(self, layer_names, out_subdir="attention", max_heads=4):
        self.observer = AttentionObserver(layer_names, max_heads=max_heads)
        self.out_subdir = out_subdir

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if model is not None:
            self.observer.attach(model)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if not state.is_world_process_zero:
            return
        out_dir = os.path.join(args.output_dir, self.out_subdir)
        os.makedirs(out_dir, exist_ok=True)
        for name, captured in self.observer.maps.items():
            if not captured:
                continue
            maps = captured[-1].float().cpu().numpy()
            fig = plot_heads(maps, f"{name} @ step {state.global_step}")
            fig.savefig(os.path.join(out_dir, f"{name.replace('.', '_')}_{state.global_step:07d}.png"), dpi=80)
            plt.close(fig)

    def on_train_end(self, args, state, control, **kwargs):
        self.observer.remove()


def default_layers(num_layers, every=4, prefix="bert.encoder.layer"):
    return [f"{prefix}.{i}.attention.self" for i in range(0, num_layers, every)]
