"""TL016: hook handles appended to a list on every step, the list never emptied."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    Facts,
    Role,
    Store,
    Unit,
    bounded_per_call,
    callee_name,
    callees,
    hook_registration,
    is_training_iteration,
    mentions,
    own_nodes,
    placed,
    receiver,
    removes_handles,
    repeats_per_step,
    root_name,
)
from tensorlint.rule import Report, Rule

_HOOK_ROLES = (Role.MODULE_HOOK, Role.TENSOR_HOOK)


class HookHandlesAccumulated(Rule):
    """
    ## What it does
    Checks for the handles of hook registrations (`register_forward_hook` and the other module
    hooks, a tensor's `register_hook`) appended to a list or stored under a new key
    (`self.handles.append(...)`, `+= [...]`, `extend`, `handles[step] = ...`) in code that runs
    again and again: `forward`, a per-batch `training_step`, a hook, the body of a loop over
    batches, or a method that registers, runs and removes hooks on every call; while nothing
    ever empties that container.

    ## Why is this bad?
    Each step registers one more hook and keeps its `RemovableHandle`. Until the handles are
    removed, the hooks pile up: after N steps the module runs N hooks on every pass, and each keeps
    alive what it captures and stores. Even when the handles are `.remove()`d, a list that is
    never emptied keeps every dead handle and grows by one per registration, without bound
    (omerbt/Splice fixed exactly this, issue 134). The hook APIs return a handle so that it can
    be removed, and the PyTorch blog *Understanding GPU Memory 2* traces such growth to hooks and
    the closures they keep. Measured with `tensorlint verify` on CPU
    (`fixtures/runtime/tl016_probe_handles.py`): a module whose `forward` registers a hook that
    keeps a 64 x 256 float32 activation, and keeps the handle, holds 64 KiB more after every call,
    and every call runs one more hook.

    Not reported: registrations in `__init__`, setup functions or loops over modules that run
    once; handles stored in a list that the code empties (`.clear()`, `= []`, `del h[:]`, `pop`)
    or that the same call empties on every path; registrations under a test of the list itself
    (`if not self.handles:`); handles stored under a fixed key (`self.handles[name] = ...`); a
    local list in `forward` (it dies with the call; TL008 is about hooks whose handle is lost);
    hooks on a module created in the same iteration.

    ## Example
    ```python
    class Probe(nn.Module):
        def forward(self, x):
            self.handles.append(self.body.register_forward_hook(self.save))
            return self.body(x)
    ```

    Use instead:
    ```python
    class Probe(nn.Module):
        def forward(self, x):
            self.handles.append(self.body.register_forward_hook(self.save))
            try:
                return self.body(x)
            finally:
                for handle in self.handles:
                    handle.remove()
                self.handles.clear()
    ```

    ## Fix safety
    This rule reports without a fix: whether the hooks should be registered once or removed at the
    end of each step is a decision about the program's structure, and emptying the list without
    removing the handles would leave the hooks registered.

    ## References
    - [torch.utils.hooks.RemovableHandle](https://github.com/pytorch/pytorch/blob/main/torch/utils/hooks.py)
    - [torch.nn.Module.register_forward_hook (returns a `RemovableHandle`)](https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook)
    - [PyTorch blog: Understanding GPU Memory 2: Finding and Removing Reference Cycles](https://pytorch.org/blog/understanding-gpu-memory-2/)
    - [omerbt/Splice issue 134: memory leak, hook handles never cleared](https://github.com/omerbt/Splice/issues/134)
    """

    code = "TL016"
    name = "hook-handles-accumulated"
    summary = "Hook handles appended to a list on every step, the list never emptied"
    grows_over_a_run = True
    invalid = (
        """
        import torch
        from torch import nn

        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 8)
                self.handles = []
                self.seen = []

            def forward(self, x):
                self.handles.append(self.body.register_forward_hook(lambda m, i, o: self.seen.append(o.shape)))
                return self.body(x)
        """,
        """
        import torch

        def train(model, loader, optimizer, log):
            handles = []
            for x, y in loader:
                handles.append(model.fc.register_forward_hook(lambda m, i, o: log(o.norm().item())))
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
    )
    valid = (
        """
        import torch

        def train(model, loader, optimizer, log):
            handles = [model.fc.register_forward_hook(lambda m, i, o: log(o.norm().item()))]
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            for handle in handles:
                handle.remove()
        """,
        """
        import torch
        from torch import nn

        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 8)
                self.handles = []
                self.seen = []

            def forward(self, x):
                self.handles.append(self.body.register_forward_hook(lambda m, i, o: self.seen.append(o.shape)))
                out = self.body(x)
                for handle in self.handles:
                    handle.remove()
                self.handles.clear()
                return out
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for store in facts.stores:
            if not store.grows or store.reset_this_iteration:
                continue
            registration = hook_registration(store.value_expr, store.unit)
            container = root_name(store.container)
            if registration is None or container is None or _under_a_test_of(store.unit, store.node, container):
                continue
            lifetime, kind = facts.container_kind(store.unit, store.container)
            if kind == "managed" or (lifetime != "local" and bounded_per_call(facts, store)):
                continue  # emptied somewhere, or by the call that fills it (a local list is made by it)
            where = _repeating(facts, store, registration, lifetime == "local")
            if where is None:
                continue
            yield Report(
                store.node,
                f"`{callee_name(registration)}` {where} keeps one more handle in `{container}`, which "
                "is never emptied: it grows by a handle per call and, until each is `.remove()`d, "
                "the hooks pile up, every one running on each pass and keeping what it captures; "
                "register once, or remove the handles and empty the list when the step ends",
            )


def _repeating(facts: Facts, store: Store, registration: cst.Call, local: bool) -> str | None:
    """Where the store runs again and again, in words; None when it runs once as far as we see.
    A local list repeats only in a loop over batches around it (it dies with the call)."""
    loops = [loop.node for loop in store.loops]
    where = repeats_per_step(store.unit, loops, facts.imports, receiver(registration))
    if local:
        batches = [loop for loop in store.loops if is_training_iteration(loop.node, store.unit, facts.imports)]
        if not batches or root_name(store.container) in batches[-1].assigned:
            return None  # the iteration makes its own list
        return where
    if where is not None:
        return where
    unit: Unit | None = store.unit
    while unit is not None:
        if any(role in unit.roles for role in _HOOK_ROLES):
            return "in a hook, on every pass,"
        unit = unit.parent
    cycle = _register_remove_cycle(facts, store)
    return f"in each call of `{cycle}` (which registers, runs and removes hooks)" if cycle else None


def _register_remove_cycle(facts: Facts, store: Store) -> str | None:
    """A method that registers the hooks (itself or through `self.register()`) and removes them
    again (`for h in self.handles: h.remove()`): it is meant to run many times, each run adding
    its handles to the list. Its name, `Class.method`."""
    method = store.unit.method_unit()
    container = root_name(store.container)
    if method is None or method.cls is None or container is None:
        return None
    callers = [u for u in facts.index.units if u.cls is method.cls and method in _self_callees(facts, u)]
    if callers and all(_registers_only_when_empty(facts, caller, method, container) for caller in callers):
        return None  # `if len(self.handles) == 0: self.attach_hooks()`: attached once
    for unit in facts.index.units:
        if unit.cls is not method.cls or not unit.is_method or unit.name == "__init__":
            continue
        reached = [unit, *_self_callees(facts, unit)]
        if method in reached and any(removes_handles(other.node, container) for other in reached):
            return f"{unit.cls.name}.{unit.name}"
    return None


def _registers_only_when_empty(facts: Facts, unit: Unit, method: Unit, container: str) -> bool:
    """Whether `unit` calls the registering method only under an `if` that reads the list
    (`if len(self.handles) == 0: self.attach_hooks(...)`)."""
    calls = [call for call, callee in callees(facts.index, unit) if callee is method]
    return bool(calls) and all(_under_a_test_of(unit, call, container) for call in calls)


def _self_callees(facts: Facts, unit: Unit) -> list[Unit]:
    """The methods of the same class that `unit` calls on `self`."""
    return [callee for _, callee in callees(facts.index, unit) if callee.is_method and callee.cls is unit.cls]


def _under_a_test_of(unit: Unit, node: cst.CSTNode, container: str) -> bool:
    """`node` sits under an `if` that reads the container (`if not self.handles:`): it runs while
    the list is empty, so the hooks are registered once."""
    for branch, _ in placed(unit, cst.If):
        if mentions(branch.test, container) and any(inner is node for inner in own_nodes(branch.body)):
            return True
    return False
