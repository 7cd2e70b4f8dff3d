"""TL001: a tensor kept in a container that outlives `forward`."""

from __future__ import annotations

from collections.abc import Iterator

from tensorlint.analysis import Facts
from tensorlint.analysis.facts import bounded_per_call, root_name
from tensorlint.analysis.index import Role
from tensorlint.rule import Report, Rule

# Code that runs once per batch: `forward`, hooks, and the per-step methods frameworks call.
REPEATING_ROLES = (Role.FORWARD, Role.MODULE_HOOK, Role.TENSOR_HOOK, Role.STEP)


class TensorKeptInForward(Rule):
    """
    ## What it does
    Checks for tensors stored, in `forward` or in a forward/backward hook, into a container
    that outlives the call and grows with every call: `self.cache.append(h)`,
    `self.outputs += [h]`, `self.stats[step] = h`, `store.setdefault(k, []).append(h)`, a
    module-level or enclosing-function list or dict that a hook appends to, or a list on another
    object that a hook appends to (`module.outputs.append(output)` after `layer.outputs = []`).

    ## Why is this bad?
    `forward` runs once per batch, so the container gains one tensor per batch until the
    process runs out of memory. PyTorch's FAQ: a tensor assigned to a member of an object "will
    not deallocate until the object goes out of scope". Measured on an NVIDIA H200: a
    `self.cache.append(h)` of a 256x4096 activation keeps 4 MiB per call, and so does
    `self.cache.append(h.detach().clone())`: `.detach()` drops the autograd graph but not the
    tensor, so it does not bound the cache. A forward hook that does `acts.append(output)` keeps
    4 MiB per call in the same way.

    Not reported: containers reset or cleared in the same `forward` or in another method of
    the class (`reset()`, `on_epoch_end()`), `collections.deque(maxlen=N)`, registered buffers
    and parameters written in place, Python numbers (`h.item()`), local lists, a write under a
    key that does not change between calls (`self.last["h"] = h`,
    `activation[name] = output` in a hook factory), and containers whose kind the file does not
    show.

    ## Example
    ```python
    class Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1024, 4096)
            self.features = []

        def forward(self, x):
            h = self.fc(x)
            self.features.append(h.detach())  # grows by 4 MiB every call
            return h
    ```

    Use instead:
    ```python
    class Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1024, 4096)
            self.features = collections.deque(maxlen=8)  # or clear it once per step

        def forward(self, x):
            h = self.fc(x)
            self.features.append(h.detach().cpu())
            return h
    ```

    ## Fix safety
    No automatic fix: bounding or clearing a cache changes what the program keeps, and only
    its author knows how much of the history is needed.

    ## References
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [torch.nn.Module.register_forward_hook](https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook)
    """

    code = "TL001"
    name = "tensor-kept-in-forward"
    summary = "Tensor stored in a container that outlives `forward` and grows every call"
    invalid = (
        """
        from torch import nn

        class Cache(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.cache = []

            def forward(self, x):
                h = self.fc(x)
                self.cache.append(h.detach().clone())
                return h
        """,
        """
        import torch

        activations = []

        def save(module, inputs, output):
            activations.append(output)

        model = torch.nn.Linear(4, 4)
        model.register_forward_hook(save)
        """,
    )
    valid = (
        """
        from torch import nn

        class Features(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

            def forward(self, x):
                self.features = []
                for block in self.blocks:
                    x = block(x)
                    self.features.append(x)
                return x
        """,
        """
        import collections
        from torch import nn

        class Recent(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.recent = collections.deque(maxlen=4)
                self.norms = []

            def forward(self, x):
                h = self.fc(x)
                self.recent.append(h.detach())
                self.norms.append(h.norm().item())
                return h
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for store in facts.stores:
            role = next((r for r in REPEATING_ROLES if r in store.unit.roles), None)
            if role is None or not store.value.tensor or not store.grows or bounded_per_call(facts, store):
                continue
            if role is Role.STEP and not store.value.graph and not (store.unit.cls and store.unit.cls.is_module):
                continue  # a meter or metric collects detached values by design, for as long as it lives
            lifetime, kind = facts.container_kind(store.unit, store.container)
            if lifetime == "local":
                continue
            # A per-step method's graphs stay alive until the container is cleared (an epoch).
            graphs_until_cleared = kind == "managed" and role is Role.STEP and store.value.graph
            grows = kind in ("list", "dict") or (store.concatenates and kind in (None, "tensor"))
            if not (grows or graphs_until_cleared):
                continue
            why = store.unit.roles[role]
            where = f"of a hook {why}" if role in (Role.MODULE_HOOK, Role.TENSOR_HOOK) else f"of {why}"
            name = root_name(store.container)  # `self.stats` for self.stats["float"].append(y)
            container = f"`{name}`" if name else "a container"
            if graphs_until_cleared:
                message = (
                    f"{container} keeps the autograd graph of every call {where} until it is cleared: "
                    "each step's activations stay alive until then; store `.detach()` (or `.item()`)"
                )
            else:
                what = "the autograd graph and " if store.value.graph and role is Role.STEP else ""
                message = (
                    f"{container} keeps {what}a tensor from every call {where}: it grows by the tensor's "
                    "size each call (`.detach()` does not bound it); clear it each step or use "
                    "`deque(maxlen=...)`"
                )
            yield Report(store.node, message)
