"""TL008: a hook registered on every forward call or training step, its handle discarded."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    MODULE_HOOK_REGISTRATIONS,
    TENSOR_HOOK_REGISTRATIONS,
    Facts,
    Place,
    Unit,
    callee_name,
    dotted_name,
    placed,
    receiver,
    repeats_per_step,
    target_names,
)
from tensorlint.rule import Report, Rule


class HookRegisteredRepeatedly(Rule):
    """
    ## What it does
    Checks for `register_forward_hook`, `register_forward_pre_hook`, `register_full_backward_hook`
    and the other module-hook registrations, and for gradient hooks on parameters
    (`layer.weight.register_hook(f)`, `p.register_hook(f)` in a loop over `named_parameters()`),
    called as a bare statement (the returned handle is discarded) in code that runs again and
    again: `forward`, a per-batch `training_step`, the body of a training or evaluation loop (a
    loop over a DataLoader, or one that steps an optimizer), or a function or method such a loop
    calls (`trainer.learn(x, y)` for `trainer = Trainer(...)` or a parameter annotated
    `trainer: Trainer`), and the methods those call on `self` or on an object they keep
    (`self.probe.attach(self.model)` in `train_step`, with `self.probe = Probe()`, even where the
    registration runs in a loop over the model's modules).

    ## Why is this bad?
    Each call adds one more hook; none is ever removed, because the `RemovableHandle` that
    could remove it was thrown away. After N steps the module runs N hooks on every pass, and
    each hook keeps alive whatever it captures and whatever it stores: a hook that appends
    activations keeps N copies of them per pass. Memory and time grow with the number of steps.
    The hook APIs return a handle for exactly this reason (`handle.remove()`), and the PyTorch
    blog *Understanding GPU Memory 2* traces such growth to hooks and closures that keep tensors.

    A parameter lives as long as the model, so its gradient hooks pile up the same way; a hook
    on an activation (`h.register_hook(f)` in `forward`) goes with that call's graph and is not
    reported.

    Not reported: registrations in `__init__`, in setup functions or in loops over modules
    (`for m in model.modules(): m.register_forward_hook(...)`), registrations whose handle is kept
    (`self.handles.append(...)`, `h = ...`), functions that call `.remove()` or clear the module's
    hook dicts, and hooks on a module created in the same iteration.

    ## Example
    ```python
    for images, _ in loader:
        model.layer4.register_forward_hook(save_features)
        model(images)
    ```

    Use instead:
    ```python
    handle = model.layer4.register_forward_hook(save_features)
    for images, _ in loader:
        model(images)
    handle.remove()
    ```

    ## Fix safety
    This rule reports without a fix: where the hook should be registered, and when removed, is a
    decision about the program's structure.

    ## References
    - [torch.nn.Module.register_forward_hook (returns a `RemovableHandle`)](https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook)
    - [PyTorch blog: Understanding GPU Memory 2: Finding and Removing Reference Cycles](https://pytorch.org/blog/understanding-gpu-memory-2/)
    """

    code = "TL008"
    reads_flow = False
    name = "hook-registered-repeatedly"
    summary = "Hook registered on every forward call or loop iteration, its handle discarded"
    grows_over_a_run = True
    invalid = (
        """
        import torch
        from torch import nn

        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 8)
                self.seen = []

            def forward(self, x):
                self.body.register_forward_hook(lambda m, i, o: self.seen.append(o.shape))
                return self.body(x)
        """,
        """
        import torch

        def train(model, loader, optimizer, log):
            for x, y in loader:
                model.fc.register_forward_hook(lambda m, i, o: log(o.norm().item()))
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
            handle = model.fc.register_forward_hook(lambda m, i, o: log(o.norm().item()))
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            handle.remove()
        """,
        """
        import torch
        from torch import nn

        def attach_probes(model: nn.Module, store: dict):
            for name, module in model.named_modules():
                if isinstance(module, nn.Conv2d):
                    module.register_forward_hook(lambda m, i, o, name=name: store.__setitem__(name, o.shape))
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        registering = {id(unit) for _, unit, _ in facts.index.hook_calls}
        for unit in facts.index.units:
            if id(unit) not in registering:
                continue
            registrations = [
                (node.value, place)
                for node, place in placed(unit, cst.Expr)
                if type(node.value) is cst.Call
                and (
                    callee_name(node.value) in MODULE_HOOK_REGISTRATIONS
                    or (callee_name(node.value) in TENSOR_HOOK_REGISTRATIONS and _on_a_parameter(node.value, place))
                )
            ]
            if not registrations or _clears_hooks(unit):
                continue
            for call, place in registrations:
                registration = callee_name(call)
                where = repeats_per_step(unit, place.loops, facts.imports, receiver(call))
                if where is None:
                    continue
                yield Report(
                    call,
                    f"`{registration}` {where} adds one more hook each time and discards its handle: "
                    "the hooks pile up, every one runs on each pass and keeps what it captures and "
                    "stores; register once (in `__init__` or before the loop), or keep the handle and "
                    "`.remove()` it",
                )


def _on_a_parameter(call: cst.Call, place: Place) -> bool:
    """`layer.weight.register_hook(f)`, or `p.register_hook(f)` in a loop over parameters: a tensor
    that lives as long as the model keeps every hook. An activation's hooks go with its graph."""
    tensor = receiver(call)
    if type(tensor) is cst.Attribute:
        return tensor.attr.value in ("weight", "bias")
    if type(tensor) is not cst.Name:
        return False
    for loop in place.loops:
        if type(loop) is cst.For and tensor.value in target_names(loop.target):
            return "param" in (dotted_name(loop.iter.func if type(loop.iter) is cst.Call else loop.iter) or "")
    return False


def _clears_hooks(unit: Unit) -> bool:
    """`handle.remove()` or `module._forward_hooks.clear()` in the function: hooks are managed."""
    if unit.removes_hooks:
        return True
    for node, _ in placed(unit, cst.Call):
        if callee_name(node) == "clear":
            owner = receiver(node)
            if owner is not None and "hooks" in (dotted_name(owner) or ""):
                return True
    return False
