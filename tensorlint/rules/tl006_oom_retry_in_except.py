"""TL006: recovery from out-of-memory run inside the `except` block that caught it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    Facts,
    Imports,
    Unit,
    callee_name,
    callees,
    calls_in,
    dotted_name,
    lineage,
    own_nodes,
    placed,
    self_attribute,
    string_value,
)
from tensorlint.rule import Report, Rule

_OOM_TYPES = frozenset(["torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"])
_BROAD_TYPES = frozenset(["RuntimeError", "Exception", "BaseException"])
# Calls that never redo the work: logging, cleanup, conversions, bookkeeping.
_NOT_WORK = frozenset(
    [
        "print",
        "str",
        "repr",
        "len",
        "int",
        "float",
        "bool",
        "isinstance",
        "hasattr",
        "getattr",
        "setattr",
        "range",
        "min",
        "max",
        "round",
        "format",
        "warn",
        "warning",
        "info",
        "debug",
        "error",
        "exception",
        "log",
        "empty_cache",
        "collect",
        "zero_grad",
        "synchronize",
        "reset_peak_memory_stats",
        "memory_summary",
        "memory_allocated",
        "memory_reserved",
        "size",
        "item",
        "append",
        "update",
        "format_exc",
        "print_exc",
        "to",
        "cpu",
        "cuda",
        "detach",
        "split",
        "chunk",
    ]
)


class OomRetryInExcept(Rule):
    """
    ## What it does
    Checks for `except` blocks that catch an out-of-memory error (`torch.cuda.OutOfMemoryError`,
    `torch.OutOfMemoryError`, or a `RuntimeError` tested for "out of memory") and retry the
    failed work inside the block: they call again what the `try` block called (`model(...)`,
    `self.generate(...)`), or what a helper of the file that it called ran (`self._run(images)`
    runs `self.model(...)`; the handler's `self._run_one_by_one(images)` runs it again), or the
    enclosing function itself.

    ## Why is this bad?
    The exception object holds its traceback, and the traceback holds every frame the error
    passed through, with all their local tensors: the activations of the attempt that ran out of
    memory. While the `except` block runs, all of that is still allocated, so the retry starts
    with the memory that made the first attempt fail. PyTorch's FAQ ("My out of memory exception
    handler can't allocate memory") gives the fix: set a flag in the `except` block and run the
    recovery after it, when the exception and its frames are gone.

    Not reported: handlers that only log, clean up (`torch.cuda.empty_cache()`, `gc.collect()`),
    skip the batch, re-raise or shrink a batch size for a loop around the `try` to retry
    (Accelerate's `find_executable_batch_size`, Lightning's batch-size finder); handlers that
    fall back to the CPU (`.cpu()`, `.to("cpu")`), which needs no GPU memory.

    ## Example
    ```python
    try:
        output = model(batch)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        output = torch.cat([model(half) for half in batch.chunk(2)])
    ```

    Use instead:
    ```python
    oom = False
    try:
        output = model(batch)
    except torch.cuda.OutOfMemoryError:
        oom = True
    if oom:
        torch.cuda.empty_cache()
        output = torch.cat([model(half) for half in batch.chunk(2)])
    ```

    ## Fix safety
    This rule reports without a fix: moving the recovery out of the `except` block changes the
    control flow in ways only the author can decide.

    ## References
    - [PyTorch FAQ: My out of memory exception handler can't allocate memory](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [Python reference: the `try` statement (the exception is cleared at the end of `except`)](https://docs.python.org/3/reference/compound_stmts.html#except-clause)
    """

    code = "TL006"
    name = "oom-retry-in-except"
    summary = "Out-of-memory recovery run inside the `except` block that caught it"
    invalid = (
        """
        import torch

        def predict(model, batch):
            try:
                return model(batch)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                return torch.cat([model(half) for half in batch.chunk(2)])
        """,
        """
        import torch

        def generate(model, prompt, max_length=512):
            try:
                return model.generate(prompt, max_length=max_length)
            except RuntimeError as e:
                if "out of memory" not in str(e):
                    raise
                return generate(model, prompt, max_length=max_length // 2)
        """,
    )
    valid = (
        """
        import torch

        def predict(model, batch):
            oom = False
            try:
                return model(batch)
            except torch.cuda.OutOfMemoryError:
                oom = True
            if oom:
                torch.cuda.empty_cache()
                return torch.cat([model(half) for half in batch.chunk(2)])
        """,
        """
        import torch

        def train(model, loader, optimizer):
            for x, y in loader:
                try:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    optimizer.step()
                except RuntimeError as e:
                    if "out of memory" in str(e):
                        print("skipping batch")
                        optimizer.zero_grad(set_to_none=True)
                        torch.cuda.empty_cache()
                        continue
                    raise
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            if not unit.has_try:
                continue
            for node, _ in placed(unit, cst.Try):
                for handler in node.handlers:
                    report = _retry(facts, unit, node, handler)
                    if report is not None:
                        yield report


def _retry(facts: Facts, unit: Unit, attempt: cst.Try, handler: cst.ExceptHandler) -> Report | None:
    if not _catches_oom(facts.imports, handler):
        return None
    handler_calls = calls_in(handler.body)
    if any(_moves_to_cpu(call) for call in handler_calls):
        return None  # a CPU fallback needs no GPU memory
    helpers = {id(call): helper for call, helper in callees(facts.index, unit)}
    attempted = calls_in(attempt.body)
    # What the `try` ran, and the networks that the helpers of this file it called ran
    # (`self._run(x)` runs `self.model(x)`): a handler that runs one again through another helper
    # retries it (not a tokenizer's `encode` that both call).
    attempted += [
        inner
        for call in attempted
        if (helper := helpers.get(id(call))) not in (None, unit)
        for inner in _calls_of(helper)
        if _is_module(facts, helper, inner.func)
    ]
    tried = {callee for call in attempted if (callee := _callee(call)) is not None}
    own = unit.name if type(unit.node) is cst.FunctionDef else None
    for call in handler_calls:
        callee = _callee(call)
        if callee is None or (callee_name(call) or "") in _NOT_WORK:
            continue
        recursive = own is not None and callee in (own, f"{unit.self_name}.{own}")
        helper = helpers.get(id(call))
        rerun = _reruns(facts, helper, tried) if helper is not None and helper is not unit else None
        if recursive or rerun or (callee in tried and _computes(facts, unit, call)):
            what = "the enclosing function" if recursive and callee not in tried else f"`{callee}(...)`"
            if rerun and callee not in tried and not recursive:
                what = f"`{rerun}(...)`, through `{callee}(...)`,"
            return Report(
                call,
                f"{what} is retried inside the `except` block that caught the out-of-memory error: the "
                "exception's traceback keeps the failed attempt's frames and their tensors allocated "
                "while the retry runs; set a flag in `except` and retry after the block",
            )
    return None


def _reruns(facts: Facts, helper: Unit, tried: set[str], depth: int = 0) -> str | None:
    """What the `try` ran that a function of this file, called by the handler, runs again
    (`self._step_in_chunks(x)` calls the tried `self._forward_backward` on each chunk), itself or
    through the functions it calls; None when it falls back to the CPU."""
    calls = _calls_of(helper)
    if any(_moves_to_cpu(call) for call in calls):
        return None
    for call in calls:
        callee = _callee(call)
        if callee in tried and _computes(facts, helper, call):
            return callee
    if depth >= _HELPER_DEPTH:
        return None
    inner = (_reruns(facts, each, tried, depth + 1) for _, each in callees(facts.index, helper) if each is not helper)
    return next((found for found in inner if found is not None), None)


_HELPER_DEPTH = 1  # a helper's own helpers are read too; not further


# Methods that run a model: retrying one redoes the work that ran out of memory.
_COMPUTE_METHODS = frozenset(
    ["forward", "generate", "predict", "encode", "decode", "sample", "infer", "inference", "training_step",
     "train_step", "validation_step", "predict_step", "test_step", "model_step", "run_model", "backward"]
)  # fmt: skip


def _computes(facts: Facts, unit: Unit, call: cst.Call, depth: int = 0) -> bool:
    """A call that runs a model or makes tensors: a module called, a model method, a torch
    function, or a function of this file that makes one of those calls (`self._forward_backward(x)`)."""
    name = callee_name(call) or ""
    if name in _COMPUTE_METHODS or name.startswith(("forward_", "generate_", "predict_")):
        return True
    qualified = facts.imports.qualify(call.func) or ""
    if qualified.startswith("torch.") and not qualified.startswith("torch.cuda."):
        return True
    if _is_module(facts, unit, call.func):
        return True
    return depth < _HELPER_DEPTH and any(
        _computes(facts, helper, inner, depth + 1)
        for found, helper in callees(facts.index, unit)
        if found is call and helper is not unit
        for inner in _calls_of(helper)
    )


def _calls_of(unit: Unit) -> list[cst.Call]:
    body = getattr(unit.node, "body", None)
    return calls_in(body) if body is not None else []


_MODEL_WORDS = ("model", "net", "encoder", "decoder", "pipe", "unet", "vae", "transformer")
# `trainer.get_model()`, `save_model(...)`: fetch, build or store a network; they do not run it.
_ACCESSORS = frozenset(["get", "set", "build", "make", "create", "load", "save", "init", "unwrap", "wrap", "prepare"])


def _is_module(facts: Facts, unit: Unit, func: cst.BaseExpression) -> bool:
    last = (dotted_name(func) or "").rsplit(".", 1)[-1].lower()
    if any(word in last for word in _MODEL_WORDS) and last.split("_")[0] not in _ACCESSORS:
        return True  # `model(x)`, `self.net(x)`: named for what it is (not `get_model()`)
    if type(func) is cst.Name:
        current: Unit | None = unit
        while current is not None:
            if func.value in current.module_evidence:
                return True
            value = (facts.names_at_end(current) or {}).get(func.value)
            if value is not None:
                return value.module
            current = current.parent
        return False
    attribute = self_attribute(unit, func)
    if attribute is not None:
        assert unit.cls is not None
        return any(attribute in cls.module_attributes for cls in lineage(facts.index.classes, unit.cls))
    return False


def _callee(call: cst.Call) -> str | None:
    return dotted_name(call.func)


def _catches_oom(imports: Imports, handler: cst.ExceptHandler) -> bool:
    caught = _caught(imports, handler.type)
    if caught & _OOM_TYPES:
        return True
    if handler.type is not None and not (caught & _BROAD_TYPES):
        return False
    return any(_mentions_oom(node) for node in own_nodes(handler.body))


def _caught(imports: Imports, expr: cst.BaseExpression | None) -> set[str]:
    if expr is None:
        return {"BaseException"}
    elements = [e.value for e in expr.elements] if type(expr) is cst.Tuple else [expr]
    found = set()
    for element in elements:
        qualified = imports.qualify(element) or dotted_name(element)
        if qualified is not None:
            found.add(qualified)
    return found


def _mentions_oom(node: cst.CSTNode) -> bool:
    """`"out of memory" in str(e)`, `is_oom_error(e)`, `should_reduce_batch_size(e)`."""
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        text = (string_value(node) or "").lower()
        return "out of memory" in text or "out-of-memory" in text
    if type(node) is cst.Call:
        name = (callee_name(node) or "").lower()
        return "oom" in name.split("_") or "out_of_memory" in name or name == "should_reduce_batch_size"
    return type(node) is cst.Name and node.value == "OutOfMemoryError"


def _moves_to_cpu(call: cst.Call) -> bool:
    name = callee_name(call)
    if name == "cpu" and type(call.func) is cst.Attribute:
        return True
    for arg in call.args:
        text = string_value(arg.value)
        if text == "cpu" and (name == "to" or (arg.keyword is not None and arg.keyword.value == "device")):
            return True
    return False
