"""TL019: `torch.cuda.empty_cache()` called on every training or evaluation step."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    Facts,
    Imports,
    Place,
    Role,
    Unit,
    callee_name,
    dotted_name,
    first_iteration_calls,
    names_a_counter,
    own_nodes,
    placed,
    run_once_calls,
    runs_steps,
    step_loop,
)
from tensorlint.rule import Report, Rule

_EMPTY_CACHE = frozenset(
    ["torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.mps.empty_cache", "torch.xpu.empty_cache"]
)
_PER_STEP = (Role.FORWARD, Role.STEP)
# Per-call methods of any object (a pipeline block's `__call__`, a meter's `update`): not known to run per batch.
_GENERIC_CALLS = frozenset(["__call__", "update", "process"])
# Words of a setting that switches the call on (`cfg.empty_cache`, `args.empty_unused_memory_level`).
_KNOB_WORDS = frozenset(["empty", "cache", "memory", "mem"])
# Allocator queries in an `if` test: the cache is emptied when memory runs short, not every step.
_MEMORY_QUERIES = frozenset(
    [
        "memory_allocated",
        "memory_reserved",
        "mem_get_info",
        "max_memory_allocated",
        "max_memory_reserved",
        "memory_stats",
    ]
)


class EmptyCacheInLoop(Rule):
    """
    ## What it does
    Checks for `torch.cuda.empty_cache()` (and `torch.mps`/`torch.xpu`'s) called once per step:
    in the body of a training or evaluation loop (a loop over a DataLoader, or one that fetches
    batches with `next()`, steps an optimizer or calls `backward()`), or in `forward` or a per-step method (`training_step`, `validation_step`,
    `on_train_batch_end`, any `*_step` or `*_batch` method) and the methods of `self` they call.
    A generic `__call__`, `update` or `process` does not count: such a call may run once per
    video segment, request or pipeline stage.

    ## Why is this bad?
    `empty_cache()` returns the caching allocator's unused blocks to the driver. It frees no
    tensor that is still referenced, so it cannot fix a leak; PyTorch's CUDA semantics notes say
    it "will not increase the amount of GPU memory available for PyTorch". Called every step,
    it makes the next step `cudaMalloc` the blocks it needs again, which synchronizes the device
    and slows training; `nvidia-smi` shows less memory in use while nothing was gained.

    Not reported: a call once per epoch or per run (in a loop whose body runs a whole loop over
    batches; `range(args.itr)` counts runs, whatever the count is named), in a block that leaves
    the loop (`if stop: ...; break`),
    after training or evaluation, in loops over models, checkpoints or configurations, in an
    `except` handler (out-of-memory recovery, see [TL006](TL006.md)), under an `if` that runs it
    every N steps (`if step % 100 == 0:`) or on one step (`if self.get_num_updates() == 0:`,
    `if i == 0:` for the index `enumerate` gives the loop over batches, or a counter the code
    counts up; not `rank == 0` or `gpu_idx == 0`, true on every step of one process), behind a flag
    the block clears (`if self._first_iter: ...; self._first_iter = False`), when memory runs short (`if
    torch.cuda.memory_reserved() > limit:`) or when a setting named for it asks (`if
    args.empty_unused_memory_level >= 1:`), and `gc.collect()` alone.

    ## Example
    ```python
    for images, labels in loader:
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
    ```

    Use instead:
    ```python
    for images, labels in loader:
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.empty_cache()  # once, if another process needs the memory
    ```

    ## Fix safety
    This rule reports without a fix: whether the call can go, or should move after the loop,
    depends on whether another process or a library outside PyTorch's allocator (CuPy, TensorRT,
    a second framework) needs the returned memory while this loop runs.

    ## References
    - [CUDA semantics: Memory management](https://docs.pytorch.org/docs/stable/notes/cuda.html#memory-management)
    - [torch.cuda.empty_cache](https://docs.pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html)
    - [PyTorch forum: About torch.cuda.empty_cache()](https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232)
    """

    code = "TL019"
    reads_flow = False
    default_enabled = False
    name = "empty-cache-in-loop"
    summary = "`torch.cuda.empty_cache()` called on every training or evaluation step"
    invalid = (
        """
        import torch

        def train(model, loader, optimizer):
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                torch.cuda.empty_cache()
        """,
    )
    valid = (
        """
        import torch

        def train(model, loader, optimizer, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                torch.cuda.empty_cache()
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            for call, place in placed(unit, cst.Call):
                if facts.imports.qualify(call.func) not in _EMPTY_CACHE or place.handlers:
                    continue
                where = _every_step(facts.imports, unit, call, place)
                if where is None or _conditional(call, unit, place):
                    continue
                spelled = cst.Module([]).code_for_node(call.func)
                yield Report(
                    call,
                    f"`{spelled}()` runs {where}: it frees no tensor that is still referenced (it cannot "
                    "fix a leak) and hands cached blocks back to the driver, so the next step allocates "
                    "them again with `cudaMalloc` and synchronizes; empty the cache once after training or evaluation, if at all",
                )


def _every_step(imports: Imports, unit: Unit, call: cst.Call, place: Place) -> str | None:
    """Where the call runs once per step, in words; None when it runs less often."""
    if step_loop(call, place, unit, imports) is not None:
        return "on every iteration of this loop over batches"
    if any(runs_steps(loop, unit, imports) for loop in place.loops):
        return None  # in a loop over epochs, or in a block that leaves the loop: less often than each step
    method = unit.method_unit()
    if method is not None and method.name not in _GENERIC_CALLS:
        role = next((r for r in _PER_STEP if r in method.roles), None)
        if role is not None:
            return f"on every call of {method.roles[role]}"
    return None


def _one_step(test: cst.CSTNode, unit: Unit, place: Place) -> bool:
    """`step == 0`, `self.get_num_updates() == 0`, `i == 0` in `for i, batch in
    enumerate(loader)`: a counter of steps compared with one number, true on one step only (not
    `rank == 0`, true on every step of one process)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    if type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = [test.left, test.comparisons[0].comparator]
    if not any(type(side) is cst.Integer for side in sides):
        return False
    counter = next(side for side in sides if type(side) is not cst.Integer)
    if _counts_iterations(counter, unit, place):
        return True
    named = [n.value for n in [counter, *own_nodes(counter)] if type(n) is cst.Name]
    return any(names_a_counter(name) and "epoch" not in name.lower() for name in named)  # an epoch is many steps


def _counts_iterations(expr: cst.CSTNode, unit: Unit, place: Place) -> bool:
    """The index `enumerate` gives the function's loop over batches (the outermost, in a function
    that is not itself run once per step: an inner loop's index restarts every step), or a name
    or attribute of the object that the function (or a method of its class) counts up with `+= 1`."""
    outermost = place.loops[0] if place.loops and Role.STEP not in unit.roles else None
    if type(expr) is cst.Name and type(outermost) is cst.For and type(outermost.target) is cst.Tuple:
        iterable, first = outermost.iter, outermost.target.elements[0].value
        enumerated = type(iterable) is cst.Call and callee_name(iterable) == "enumerate"
        if enumerated and type(first) is cst.Name and first.value == expr.value:
            return True
    counted = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if counted is None:
        return False
    scopes = [unit.node]
    method = unit.method_unit()
    if method is not None and method.cls is not None and counted.startswith(f"{method.self_name}."):
        scopes += list(method.cls.methods.values())
    return any(
        type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign and dotted_name(node.target) == counted
        for scope in scopes
        for node in own_nodes(scope)
    )


def _conditional(call: cst.Call, unit: Unit, place: Place) -> bool:
    """Under an `if` inside the step that runs it every N steps, when memory runs short, or once
    (`if self._first_iter:` that clears the flag)."""
    if id(call) in run_once_calls(unit) | first_iteration_calls(unit):
        return True
    scope = place.loops[-1].body if place.loops else unit.node
    for node in own_nodes(scope):
        if type(node) is cst.If and any(inner is call for inner in own_nodes(node.body)):
            tests = [node.test, *own_nodes(node.test)]
            if any(type(t) is cst.BinaryOperation and type(t.operator) is cst.Modulo for t in tests):
                return True
            if any(type(t) is cst.Call and callee_name(t) in _MEMORY_QUERIES for t in tests):
                return True
            if any(_one_step(t, unit, place) for t in tests):
                return True
            words = {w for t in tests if type(t) is cst.Name for w in t.value.lower().split("_")}
            if words & _KNOB_WORDS:
                return True  # `if args.empty_unused_memory_level >= 1:`: a setting the user chose
    return False
