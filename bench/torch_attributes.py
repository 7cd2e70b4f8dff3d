"""Write tensorlint/analysis/torch_attributes.py: the public attribute names of torch's tensors,
modules, distributions and optimizers.

    python bench/torch_attributes.py

The static analysis never imports torch, so it reads the names from that generated module
(tests/test_torch_attributes.py checks it against the torch of constraints.txt). Run it again
when the pinned torch changes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch

TARGET = Path(__file__).resolve().parent.parent / "tensorlint" / "analysis" / "torch_attributes.py"


# What the analysis may take for a tensor: a tensor, or a module, distribution or optimizer whose
# value it could not tell from one (a class handed in as a parameter and called).
CLASSES = (torch.Tensor, torch.nn.Module, torch.distributions.Distribution, torch.optim.Optimizer)


def names() -> list[str]:
    return sorted({name for cls in CLASSES for name in dir(cls) if not name.startswith("_")})


def module_text() -> str:
    listed = textwrap.fill(" ".join(f'"{name}",' for name in names()), width=100, break_on_hyphens=False)
    return (
        f'"""The public attribute names of torch\'s tensors, modules, distributions and optimizers (torch\n'
        f"{torch.__version__.split('+')[0]}), written by bench/torch_attributes.py: what a method called on a value the\n"
        'analysis takes for a tensor may be, read without importing torch."""\n\n'
        "TORCH_CLASS_ATTRIBUTES = frozenset(\n    [\n"
        + textwrap.indent(listed, "        ")
        + "\n    ]\n)  # fmt: skip\n"
    )


if __name__ == "__main__":
    TARGET.write_text(module_text(), encoding="utf-8")
    print(f"{TARGET}: {len(names())} names")
