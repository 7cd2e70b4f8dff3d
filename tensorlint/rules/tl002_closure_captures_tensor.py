"""TL002: a lambda or closure that captures a tensor and outlives the call."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    STORE_METHODS,
    ClosureEscape,
    Facts,
    all_params,
    callee_name,
    contains,
    iterates_loader,
    method_call,
    names_in,
    names_reaching,
    placed,
    receiver,
    walk,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule


class ClosureCapturesTensor(Rule):
    """
    ## What it does
    Checks for lambdas and nested functions that reference a tensor of the enclosing function
    (or bind one as a default argument) and outlive the call: stored in an attribute, a
    container or a global, returned or yielded, or registered as a hook or callback on
    something that lives on (a module, `self`, a parameter: `register_*`, `add_callback`,
    `connect`, ignite's `add_event_handler`). A closure made in a loop over batches that binds
    that batch's tensor as a default (`lambda t=loss: t.item()`) and is kept by a list or an
    object made before the loop (`deferred.defer("loss", ...)`, whoever defines it) is one per
    batch; one that reads the loop's variable (`lambda: loss.item()`) sees its last value only,
    and is not reported for that. A `functools.partial` that binds a
    tensor of the call is such a closure too (`partial(report, loss)`), and so is one handed to a
    method that keeps it (`registry.defer(job)` where `defer` appends `job` to `self.jobs`; for a
    parameter of unknown type, the method of the one class of the file that defines it). A tensor
    handed to a method of another module that keeps a closure over its argument
    (`logger.scalar("loss", loss)`, where `scalar` appends `lambda: writer.add_scalar(tag,
    float(value))` to `self._pending`) is reported at that call, the one place that shows it is a
    tensor. Also a
    hook registered on a tensor (`y.register_hook`, `y.grad_fn.register_hook`) whose closure
    captures what holds that tensor (`self`, when `self.out = y`; a list that `y` is appended
    to): a reference cycle. And a method of a class defined inside a function that reads a tensor
    of the call (`class _Waiter: def wait(self): return values`): the class is made anew by each
    call and lives in reference cycles, whether or not it escapes. Whose methods read the call's
    arguments instead (`def correct(self): return (logits.argmax(-1) == target).sum()`), the
    class is reported when an instance is stored where it outlives the call
    (`self.entries.append(_Entry())`): each instance keeps that call's tensors.

    ## Why is this bad?
    A closure keeps every variable it references alive, and with a tensor its storage and, if
    the tensor carries autograd history, the whole graph behind it. Kept in a list of callbacks
    it keeps them for as long as the list lives. Measured on an NVIDIA H200: a factory that
    returns a lambda over a fresh 1024x1024 float32 tensor, kept in a list, holds 4 MiB per
    call; capturing the Python float the lambda needs holds nothing. A hook whose closure
    captures the object that holds the hooked tensor forms a reference cycle (object -> tensor ->
    graph -> hook -> closure -> object) that only the cyclic garbage collector frees, so the
    tensor and its graph outlive every step until a collection runs (PyTorch blog, *Understanding
    GPU Memory 2*). A class is always in such cycles (its `__mro__` holds it): with the collector
    off, five calls of a function whose local class reads a 1024x1024 float32 tensor left all
    five tensors (4 MiB each) alive, and a nested function instead of the class left none (CPU,
    torch 2.13); the fix is a module-level class given the tensor as an instance attribute
    (dgl's graphbolt feature fetchers).

    Not reported: a lambda called at once, passed as `key=` or to `sorted`/`map`/`filter`, an
    optimizer `step(closure)`, `torch.utils.checkpoint`, a hook registered on a local
    intermediate tensor (it lives as long as that tensor's graph), closures that capture only
    Python values, modules, functions (a name the closure calls), a model's parameters (a factory's
    `make_hook(name, p)` over `model.named_parameters()`: the model holds them anyway; a factory's
    closure keeps only the arguments that its call hands tensors) or `self` (a `partial` that binds
    the object's own buffer, `weight=self.class_weights`), hooks whose handle the call removes
    before it returns (`handle.remove()`, `for h in handles: h.remove()`, also for handles made by
    a comprehension: `hooks = [m.register_forward_hook(fn) for m in layers]`), default arguments
    bound to Python values (`lambda s=loss.item(): s`), and closures put in the function's own
    list or dict when that container is not returned, stored or captured by a closure that is
    (what calling a closure returns does not hold it, nor does the key of `fns.items()`):
    all die with the call. A class defined in a function whose methods read only the function's
    parameters (the caller's tensors, which it holds anyway: a factory that builds an autograd
    Function over the static buffers it is given) is not reported either, nor a forward step that
    returns its output and the loss to apply to it (`return output_tensor, partial(loss_func,
    loss_mask)`: the pair a pipeline schedule such as Megatron's calls at once and drops).
    A closure returned by a function of another module is not followed.

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
    When a lambda only reads numbers out of the tensors it captures (`t.item()`,
    `t.tolist()`), the fix binds those numbers as default arguments instead:
    `lambda: t.item()` becomes `lambda t=t.item(): t`. It is unsafe: the number is read when the
    lambda is made, not when it is called, and reading it waits for the GPU. Closures that use
    the tensor itself, and nested functions, get no fix: capture what they need by hand.

    ## References
    - [PyTorch blog: Understanding GPU Memory 2: Finding and Removing Reference Cycles](https://pytorch.org/blog/understanding-gpu-memory-2/)
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    """

    code = "TL002"
    fix_availability = "Sometimes"
    name = "closure-captures-tensor"
    summary = "Lambda or closure captures a tensor and outlives the call"
    grows_over_a_run = True
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
        """
        import torch

        def read_async(table, ids):
            values = torch.index_select(table, 0, ids)

            class _Waiter:
                def wait(self):
                    return values

            return _Waiter()
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
            if escape.local_container is not None and not _container_outlives_call(facts, escape):
                continue  # a list of callbacks that dies with the call
            reported.add(id(escape.node))
            names = ", ".join(f"`{n}`" for n in escape.captured)
            kind = _KINDS.get(type(escape.node), "closure")
            node = escape.node.name if type(escape.node) is cst.FunctionDef else escape.node
            if escape.local_class is not None and type(escape.node) is cst.FunctionDef:
                yield Report(
                    node,
                    f"method `{escape.node.name.value}` of `{escape.local_class}`, a class defined in `{escape.unit.name}`, "
                    f"captures tensor {names}: a class made by each call lives in reference cycles (its "
                    "`__mro__` holds it), so what its methods capture stays alive until the cyclic garbage "
                    "collector runs, call after call; define the class once at module level and give the "
                    "tensor to an instance, which is freed as soon as it is dropped",
                )
                continue
            if type(escape.node) is cst.ClassDef:  # an instance of a class the function defines
                yield Report(
                    escape.node.name,
                    f"the methods of `{escape.node.name.value}`, a class defined in `{escape.unit.name}`, "
                    f"capture tensor {names}, and an instance is {escape.how}: each kept instance keeps "
                    "that call's tensors, and any graph behind them, alive; store the numbers the methods "
                    "compute (`.item()`), or a detached copy, instead",
                )
                continue
            if escape.helper is not None:  # a helper of another module keeps a closure over it
                until = "until its container is emptied" if escape.managed else "for as long as the closure is kept"
                yield Report(
                    node,
                    f"`{escape.helper}` keeps a closure that captures the tensor passed here ({names}) in a "
                    f"container of its object: the tensor, and any graph behind it, stay alive {until}; "
                    "pass a Python value (`.item()`) or a detached copy instead",
                )
                continue
            if escape.cycle is not None:
                tensor, holder = escape.cycle
                yield Report(
                    node,
                    f"{kind} {escape.how} and captures `{escape.captured[0]}`: a reference cycle "
                    f"(`{holder}` -> `{tensor}`'s graph -> this hook -> `{escape.captured[0]}`) keeps the "
                    "tensor and its graph alive until the cyclic garbage collector runs; remove the "
                    "hook's handle after use, or capture only what the hook needs",
                )
                continue
            fix = _bind_numbers(escape.node, escape.captured) if type(escape.node) is cst.Lambda else None
            yield Report(
                node,
                f"{kind} captures tensor {names} and is {escape.how}: it keeps the tensor, and "
                "any graph behind it, alive as long as it is kept; capture a Python value "
                "(`.item()`) or a detached copy instead",
                fix,
            )


_KINDS = {cst.Lambda: "lambda", cst.Call: "partial"}  # else a nested def: "closure"
_TO_NUMBER = frozenset(["item", "tolist"])


def _bind_numbers(node: cst.Lambda, captured: tuple[str, ...]) -> NodeFix | None:
    """`lambda: t.item()` -> `lambda t=t.item(): t`, when the lambda only ever reads numbers
    out of the tensors it captures. Other uses need the tensor itself: no fix then."""
    params = node.params
    if params.star_kwarg is not None or any(p.name.value in captured for p in all_params(params)):
        return None
    uses: dict[str, list[cst.Call]] = {name: [] for name in captured}
    loads = {name: 0 for name in captured}
    for inner in [node.body, *walk(node.body)]:
        if type(inner) is cst.Name and inner.value in loads:
            loads[inner.value] += 1
        elif type(inner) is cst.Call and callee_name(inner) in _TO_NUMBER and not inner.args:
            recv = receiver(inner)
            if type(recv) is cst.Name and recv.value in uses:
                uses[recv.value].append(inner)
    if any(not uses[name] or len(uses[name]) != loads[name] for name in captured):
        return None
    defaults = []
    replaced: dict[int, cst.Name] = {}
    for name in captured:
        method = callee_name(uses[name][0]) or "item"
        if any(callee_name(call) != method for call in uses[name]):
            return None
        replaced.update((id(call), cst.Name(name)) for call in uses[name])
        defaults.append(
            cst.Param(
                cst.Name(name),
                default=method_call(cst.Name(name), method),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
        )
    body = node.body.visit(_Replace(replaced))
    new_params = _append_params(params, defaults)
    return NodeFix(
        "Capture the Python values instead of the tensors (read when the lambda is made)",
        Applicability.UNSAFE,
        ((node, node.with_changes(params=new_params, body=body)),),
    )


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.Name]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.replacements.get(id(original_node), updated_node)


def _append_params(params: cst.Parameters, extra: list[cst.Param]) -> cst.Parameters:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
        kwonly = [p.with_changes(comma=comma) for p in params.kwonly_params]
        if type(params.star_arg) is cst.Param:
            params = params.with_changes(star_arg=params.star_arg.with_changes(comma=comma))
        return params.with_changes(kwonly_params=[*kwonly, *extra[:-1], extra[-1]])
    existing = [p.with_changes(comma=comma) for p in params.params]
    fixed_extra = [p.with_changes(comma=comma) for p in extra[:-1]] + extra[-1:]
    if params.posonly_params and not existing:
        return params.with_changes(params=fixed_extra)
    return params.with_changes(params=[*existing, *fixed_extra])


def _filled_across_batches(facts: Facts, escape: ClosureEscape) -> bool:
    """`scalars = Deferred()` before `for x, y in loader:` that hands it a closure per batch
    binding that batch's tensor (`scalars.defer(lambda t=loss: t.item())`): it gains one closure,
    and one batch's tensors, every iteration, for as long as the loop runs."""
    unit, name = escape.unit, escape.local_container
    if name is None or not isinstance(escape.node, (cst.Lambda, cst.FunctionDef)):
        return False
    if not set(escape.captured) <= {p.name.value for p in all_params(escape.node.params)}:
        return False  # `lambda: loss.item()` reads the loop's one cell: every closure sees the last loss only
    place = next((place for node, place in placed(unit, type(escape.node)) if node is escape.node), None)
    if place is None:
        return False
    made = unit.bindings.get(name, [])
    return any(
        iterates_loader(loop, unit, facts.imports) and not any(contains(loop, value) for value in made)
        for loop in place.loops
    )


def _container_outlives_call(facts: Facts, escape: ClosureEscape) -> bool:
    """Whether the function's own container that holds the closure is kept after the call:
    returned, stored in an attribute or a global (itself or what it flows into), read by another
    closure that escapes, or filled by a loop over batches that it outlives."""
    unit = escape.unit
    kept = set(facts.returned.get(id(unit), set())) | unit.declared_global
    for assign, _ in placed(unit, cst.Assign):
        if any(isinstance(target.target, (cst.Attribute, cst.Subscript)) for target in assign.targets):
            kept |= names_in(assign.value)
    for call, _ in placed(unit, cst.Call):
        func = call.func  # self.callbacks.append(fns)
        if callee_name(call) in STORE_METHODS and type(func) is cst.Attribute and type(func.value) is cst.Attribute:
            kept |= {name for arg in call.args for name in names_in(arg.value)}
    if escape.local_container in names_reaching(unit, kept) or _filled_across_batches(facts, escape):
        return True
    return any(
        other.unit is unit and other.local_container is None and escape.local_container in names_in(other.node)
        for other in facts.escapes
    )
