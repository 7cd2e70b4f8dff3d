"""TL002: a lambda or closure that captures a tensor and outlives the call."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import Facts
from tensorlint.rule import Report, Rule


class ClosureCapturesTensor(Rule):
    """
    ## What it does
    Checks for lambdas and nested functions that reference a tensor of the enclosing function
    (or bind one as a default argument) and outlive the call: stored in an attribute, a
    container or a global, returned or yielded, or registered as a hook or callback on
    something that lives on (a module, `self`, a parameter).

    ## Why is this bad?
    A closure keeps every variable it references alive, and with a tensor its storage and, if
    the tensor carries autograd history, the whole graph behind it. Kept in a list of callbacks
    it keeps them for as long as the list lives. Measured on an NVIDIA H200: a factory that
    returns a lambda over a fresh 1024x1024 float32 tensor, kept in a list, holds 4 MiB per
    call; capturing the Python float the lambda needs holds nothing. A closure that also
    captures `self` forms a reference cycle, which only the cyclic garbage collector frees
    (PyTorch blog, *Understanding GPU Memory 2*).

    Not reported: a lambda called at once, passed as `key=` or to `sorted`/`map`/`filter`, an
    optimizer `step(closure)`, `torch.utils.checkpoint`, a hook registered on a local
    intermediate tensor (it lives as long as that tensor's graph), closures that capture only
    Python values, modules or `self`, and default arguments bound to Python values
    (`lambda s=loss.item(): s`).

    ## Example
    ```python
    def make_callback(model, x):
        out = model(x)
        return lambda: out.mean()  # keeps `out` and its graph alive
    ```

    Use instead:
    ```python
    def make_callback(model, x):
        mean = model(x).mean().item()
        return lambda: mean
    ```

    ## Fix safety
    No automatic fix yet. Binding `.item()` or a detached CPU copy instead of the tensor
    changes the closure's result type or device, so such a fix will be unsafe.

    ## References
    - [PyTorch blog: Understanding GPU Memory 2: Finding and Removing Reference Cycles](https://pytorch.org/blog/understanding-gpu-memory-2/)
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    """

    code = "TL002"
    name = "closure-captures-tensor"
    summary = "Lambda or closure captures a tensor and outlives the call"
    invalid = (
        """
        import torch

        def make_scale():
            weight = torch.randn(1024, 1024)
            return lambda x: x @ weight
        """,
        """
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.callbacks = []

            def forward(self, x):
                h = self.fc(x)
                self.callbacks.append(lambda: h.norm())
                return h
        """,
    )
    valid = (
        """
        import torch

        def largest(tensors: list[torch.Tensor]):
            return sorted(tensors, key=lambda t: t.numel())[-1]
        """,
        """
        import torch

        def train_step(model, optimizer, x, y):
            def closure():
                optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss
            return optimizer.step(closure)
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        reported: set[int] = set()
        for escape in facts.escapes:
            if id(escape.node) in reported:
                continue
            reported.add(id(escape.node))
            names = ", ".join(f"`{n}`" for n in escape.captured)
            kind = "lambda" if isinstance(escape.node, cst.Lambda) else "closure"
            node = escape.node.name if isinstance(escape.node, cst.FunctionDef) else escape.node
            yield Report(
                node,
                f"{kind} captures tensor {names} and is {escape.how}: it keeps the tensor, and "
                "any graph behind it, alive as long as it is kept; capture a Python value "
                "(`.item()`) or a detached copy instead",
            )
