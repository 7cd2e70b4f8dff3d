"""TL015: tensors used as the keys of a dict, or the members of a set, that outlives the call."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import Facts, callee_name, root_name, tensor_keyed
from tensorlint.rule import Report, Rule


class TensorKeyedContainer(Rule):
    """
    ## What it does
    Checks for tensors made per call or per batch used as dict keys or set members
    (`cache[x] = h`, `cache.setdefault(x, h)`, `seen.add(x)`) of a dict or set that outlives the
    call: an attribute of `self`, a global, a closure's, or a local one that a loop over batches
    fills.

    ## Why is this bad?
    `torch.Tensor.__hash__` is `id()`: two tensors with equal values are different keys, so a
    lookup with the next batch's tensor never finds the entry, and each call adds one more. The
    entry keeps the key tensor alive, and with it the autograd graph the key carries. PyTorch
    never meant tensors to be keys ([pytorch#7733](https://github.com/pytorch/pytorch/issues/7733):
    "We should disallow this"); where PyTorch itself keys by tensors it uses
    `torch.utils.weak.WeakTensorKeyDictionary`, which drops the entry with the tensor. Measured
    with `tensorlint verify` on CPU: a module that caches its 64x1024 float32 output under its
    input keeps 256 KiB (and the graph) per call; the twin keyed by `tuple(x.shape)` keeps
    nothing. A growing container keyed by tensors is reported here, not as TL001 or TL004, so that
    the statement gets one finding that names the cause.

    Not reported: keys that are Python values (`.item()`, `int(...)`, `tuple(t.tolist())`,
    `t.shape`, names, `id(t)`), parameters and modules (they live as long as the model:
    `set(model.parameters())`, `seen.add(p)` over `named_parameters()`, the parameter that a
    `register_post_accumulate_grad_hook` hook is handed), the object's own tensors
    (`self._pinned.add(self._tensor)`), the keys of a `.items()` loop or of a loop over a state
    dict (`for key in state_dict`: its names) or over a dict (`for name in metrics`, where
    `metrics` is a dict display, a comprehension, or a function's `{"mse": mse, ...}`), weak dictionaries
    (`weakref.WeakKeyDictionary`, `WeakTensorKeyDictionary`), local dicts and sets used within
    one call or one iteration, a tensor index into a dict's item (`sums[name][env_ids] = 0.`: it
    writes into the tensor `sums[name]` holds), tensor indexing (`mask[idx] = 0`: the container must be shown to be
    a dict or a set), dict and set displays (`{t: v}`, `set(tensors)`) built once per call, and
    containers a method empties (`.clear()`, `.pop()`), and containers the file does not show to be
    a dict or a set (a parameter without a visible default: mutable defaults are TL012's).

    ## Example
    ```python
    class Memo(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(1024, 1024)
            self.cache = {}

        def forward(self, x):
            if x not in self.cache:  # never true for the next batch
                self.cache[x] = self.encoder(x)
            return self.cache[x]
    ```

    Use instead:
    ```python
    class Memo(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(1024, 1024)
            self.cache = torch.utils.weak.WeakTensorKeyDictionary()  # or key by a value

        def forward(self, x):
            if x not in self.cache:
                self.cache[x] = self.encoder(x)
            return self.cache[x]
    ```

    ## Fix safety
    No automatic fix: keying by a value (`tuple(x.tolist())`, a name) makes lookups hit where
    they never did, and a weak dictionary drops entries the program may read later; which one
    is meant depends on what the container is for.

    ## References
    - [pytorch#7733: Inserting a tensor into a python dict causes strange behavior](https://github.com/pytorch/pytorch/issues/7733)
    - [pytorch#22884: hash() of a Tensor is based on id()](https://github.com/pytorch/pytorch/issues/22884)
    - [torch/utils/weak.py: WeakIdKeyDictionary, WeakTensorKeyDictionary](https://github.com/pytorch/pytorch/blob/main/torch/utils/weak.py)
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    """

    code = "TL015"
    name = "tensor-keyed-container"
    summary = "Tensor used as a dict key or set member in a container that outlives the call"
    grows_over_a_run = True
    invalid = (
        """
        import torch
        from torch import nn

        class Memo(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.Linear(8, 8)
                self.cache = {}

            def forward(self, x):
                self.cache[x] = self.encoder(x)
                return self.cache[x]
        """,
        """
        import torch

        def train(model, loader, optimizer):
            seen = set()
            for images, labels in loader:
                logits = model(images)
                seen.add(logits)
                loss = torch.nn.functional.cross_entropy(logits, labels)
                loss.backward()
                optimizer.step()
        """,
    )
    valid = (
        """
        import torch
        from torch import nn

        class Memo(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.Linear(8, 8)
                self.cache = {}

            def forward(self, x):
                self.cache[tuple(x.shape)] = self.encoder(x).detach().sum().item()
                return self.encoder(x)
        """,
        """
        import torch

        def decayed(model):
            seen = set()
            for param in model.parameters():
                seen.add(param)
            return seen
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for store in facts.stores:
            holder = tensor_keyed(facts, store)
            if holder is None:
                continue
            assert store.key is not None
            name = f"`{root_name(store.container)}`" if root_name(store.container) else "a container"
            kind = "set" if type(store.node) is cst.Call and callee_name(store.node) == "add" else "dict"
            graph = " and its autograd graph" if store.key.graph else ""
            per = "every batch" if holder.startswith("a local") else "every call"
            yield Report(
                store.node,
                f"{name} ({holder}) gets a tensor {'member' if kind == 'set' else 'key'} {per}: `Tensor.__hash__` "
                f"is `id()`, so equal tensors never match, the {kind} gains an entry each time and keeps the "
                f"tensor{graph} alive; key by a value (`.item()`, `tuple(t.tolist())`) or use "
                "`torch.utils.weak.WeakTensorKeyDictionary`",
            )
