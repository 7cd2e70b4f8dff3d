"""TL017: `torch.load` of GPU-saved tensors, without `map_location`, in code that repeats or runs in workers."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    Facts,
    Place,
    Role,
    Unit,
    argument,
    callee_name,
    first_iteration_calls,
    own_nodes,
    placed,
    receiver,
    run_once_calls,
    runs_steps,
    step_loop,
    string_value,
    with_keyword,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

_LOADS = frozenset(["torch.load", "torch.serialization.load"])
# Keys of a training checkpoint: what `torch.save({"model": model.state_dict(), ...})` writes.
_CHECKPOINT_KEYS = ("state_dict", "model", "optim", "ema", "net", "weights", "params", "generator", "encoder")


class TorchLoadWithoutMapLocation(Rule):
    """
    ## What it does
    Checks for `torch.load(f)` without `map_location` in code that runs again and again: the
    body of a training or evaluation loop (over a DataLoader, or one that steps an optimizer),
    `forward`, a per-step method (`training_step`, `*_step`, `*_batch`, a metric's `update`) and
    the methods of `self` they call; or in DataLoader worker code (a dataset's `__getitem__` and
    `__iter__`, `collate_fn`, `worker_init_fn` and their helpers, as TL003 finds them). It reports
    only a load whose content the code shows to be tensors that may have been saved from a GPU: a
    checkpoint (given to `load_state_dict`, or read by a key such as `"state_dict"`, `"model"`,
    `"optimizer"`), or tensors the code then moves to the CPU (`torch.load(f).cpu()`).

    ## Why is this bad?
    `torch.load` deserialises each storage on the CPU "and then moves it to the device it was
    saved from" (its docstring): a checkpoint saved during GPU training comes back on that GPU,
    usually `cuda:0`, whatever device this process uses. In a loop or a per-step method that is
    a GPU allocation of the whole checkpoint on every call (on another process's GPU under
    DDP), and a CUDA context on `cuda:0` for every rank that loads. In DataLoader worker code it
    initialises CUDA in each worker process: under `fork` that raises `RuntimeError: Cannot
    re-initialize CUDA in forked subprocess` once the parent has used CUDA; under `spawn` or
    `forkserver` each worker creates its own CUDA context, about 636 MiB of GPU memory per worker
    measured on an NVIDIA H200, invisible to `torch.cuda.memory_allocated()`.

    Not reported: loads that pass `map_location` (any value, a variable too), loads that run once
    per epoch or per run (in a loop around the loop over batches) or once per loop (in a block that
    leaves it: `if stopper.stop(): model.load_state_dict(torch.load(best)); break`), or once
    (at module level, in `__init__`, before the loop, behind `if self.x is None:`,
    `if step == 0:` or a flag its block clears: `if restore: self.restore(); restore = False`, or
    sets: `if loaded is False: ...; loaded = True`),
    loads in pytest tests (a `test_` function is not a collate function, whatever its name says), loads of in-memory buffers (`io.BytesIO`), and loads whose content the
    code does not show to be a checkpoint or GPU tensors, such as per-sample feature files read in
    `__getitem__`: most are saved from the CPU (the one such load in 60 training repositories,
    Pytorch-UNet's `load_image`, calls `.numpy()` on it, which a CUDA tensor would refuse), and
    without that evidence none of the loads this rule would have reported there and in six
    libraries was a GPU checkpoint.

    Opt-in (`extend-select = ["TL017"]`): over 427 training repositories it reported 14 loads
    at first sight and none was a leak (each ran once per epoch, per run or on early stopping, in
    shapes that no loop test separates from a load per batch); none of the 318 leak fixes mined
    from git history is of its kind, and in the trees they come from one of its six findings was
    a load on every call (NeMo's TensorRT-LLM `forward`, reading prompt embeddings per request).

    ## Example
    ```python
    class Distill(Dataset):
        def __getitem__(self, i):
            teacher = torch.load(self.teacher_ckpts[i])
            return self.items[i], teacher["state_dict"]["head.weight"]
    ```

    Use instead:
    ```python
    class Distill(Dataset):
        def __getitem__(self, i):
            teacher = torch.load(self.teacher_ckpts[i], map_location="cpu")
            return self.items[i], teacher["state_dict"]["head.weight"]
    ```

    ## Fix safety
    The fix adds `map_location="cpu"`. It is unsafe: it changes where the loaded tensors live.
    `load_state_dict` copies into the module's own parameters wherever they are, and code that
    moves the result (`.cpu()`, `.to(device)`) gets the same tensors; but code that relied on
    the tensors arriving on the GPU must now move them itself (`.to(device)`), or pass this
    process's device as `map_location` instead.

    ## References
    - [torch.load](https://docs.pytorch.org/docs/stable/generated/torch.load.html)
    - [Saving and loading models across devices](https://docs.pytorch.org/tutorials/beginner/saving_loading_models.html#saving-loading-model-across-devices)
    - [Multiprocessing best practices: CUDA in multiprocessing](https://docs.pytorch.org/docs/stable/notes/multiprocessing.html)
    """

    code = "TL017"
    reads_flow = False
    default_enabled = False
    fix_availability = "Always"
    name = "torch-load-without-map-location"
    summary = "`torch.load` without `map_location` in a loop, a per-step method or DataLoader worker code"
    invalid = (
        """
        import torch

        def evaluate_checkpoints(model, paths, loader):
            for batch in loader:
                model.load_state_dict(torch.load(paths[batch["round"]]))
                model(batch["x"])
        """,
        """
        import torch
        from torch.utils.data import Dataset

        class TeacherLogits(Dataset):
            def __init__(self, files):
                self.files = files

            def __len__(self):
                return len(self.files)

            def __getitem__(self, i):
                return torch.load(self.files[i]).cpu()
        """,
    )
    valid = (
        """
        import torch

        def evaluate_checkpoints(model, paths, loader):
            for batch in loader:
                model.load_state_dict(torch.load(paths[batch["round"]], map_location="cpu"))
                model(batch["x"])
        """,
        """
        import torch
        from torch.utils.data import Dataset

        class Features(Dataset):
            def __init__(self, files):
                self.files = files

            def __len__(self):
                return len(self.files)

            def __getitem__(self, i):
                return torch.load(self.files[i])
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            loads = [
                (call, place)
                for call, place in placed(unit, cst.Call)
                if facts.imports.qualify(call.func) in _LOADS and _without_map_location(unit, call)
            ]
            for call, place in loads:
                repeats = _repeats(facts, unit, place, call)
                content = _gpu_content(unit, call) if repeats is not None else None
                if repeats is None or content is None:
                    continue
                where, cost = repeats
                yield Report(
                    call,
                    f"`torch.load` without `map_location` {where}: {content} comes back on the GPU it was "
                    f'saved from (often `cuda:0`, whatever this process uses) {cost}; pass `map_location="cpu"` '
                    "(or this process's device)",
                    NodeFix(
                        'Load onto the CPU: `map_location="cpu"`',
                        Applicability.UNSAFE,
                        ((call, with_keyword(call, "map_location", cst.SimpleString('"cpu"'))),),
                    ),
                )


_IN_WORKERS = (
    "in every worker process: under fork that raises `RuntimeError: Cannot re-initialize CUDA in forked "
    "subprocess` once the parent has used CUDA, otherwise each worker creates its own CUDA context (~636 MiB)"
)
_ON_EVERY_CALL = "and is allocated there again on every call, or load it once before the loop"


def _without_map_location(unit: Unit, call: cst.Call) -> bool:
    if any(arg.star for arg in call.args):
        return False  # `torch.load(path, **kwargs)` may pass it
    if argument(call, "map_location", 1) is not None:
        return False
    source = argument(call, "f", 0)
    if type(source) is cst.Name:
        source = next(iter(unit.lookup_bindings(source.value)), source)
    return not (type(source) is cst.Call and callee_name(source) == "BytesIO")  # an in-memory round trip


def _repeats(facts: Facts, unit: Unit, place: Place, call: cst.Call) -> tuple[str, str] | None:
    """Where the load runs again and again and what that costs, in words; None when it runs once
    as far as we see."""
    worker = unit.worker_unit()
    if worker is not None:
        return f"in {worker.roles[Role.WORKER]}", _IN_WORKERS
    if id(call) in run_once_calls(unit) | first_iteration_calls(unit) or _on_one_iteration(unit, call):
        return None
    if step_loop(call, place, unit, facts.imports) is not None:
        return "in this loop over batches", _ON_EVERY_CALL
    if any(runs_steps(loop, unit, facts.imports) for loop in place.loops):
        return None  # in a loop over epochs or runs, or in a block that leaves the loop: once per epoch at most
    method = unit.method_unit()
    for role in (Role.FORWARD, Role.STEP):
        if method is not None and role in method.roles:
            return f"in {method.roles[role]}", _ON_EVERY_CALL
    return None


def _on_one_iteration(unit: Unit, call: cst.Call) -> bool:
    """Under `if step == 0:` / `if save and idx == 2:`: a comparison with a number, true on one iteration."""
    for node, _ in placed(unit, cst.If):
        if _equals_number(node.test) and any(inner is call for inner in own_nodes(node.body)):
            return True
    return False


def _equals_number(test: cst.BaseExpression) -> bool:
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _equals_number(test.left) or _equals_number(test.right)
    return (
        type(test) is cst.Comparison
        and len(test.comparisons) == 1
        and type(test.comparisons[0].operator) is cst.Equal
        and type(test.comparisons[0].comparator) is cst.Integer
    )


def _gpu_content(unit: Unit, call: cst.Call) -> str | None:
    """What the code shows the loaded object to be, when it may hold GPU tensors: a checkpoint
    (a state dict given to `load_state_dict`, or read by a checkpoint key), or tensors it moves
    to the CPU afterwards. None for anything else (per-sample features, mostly saved from the CPU)."""
    names = {
        target.target.value
        for node, _ in placed(unit, cst.Assign)
        if node.value is call
        for target in node.targets
        if type(target.target) is cst.Name
    }

    def is_loaded(expr: cst.BaseExpression) -> bool:
        while type(expr) is cst.Subscript:
            expr = expr.value  # ckpt["model"]["encoder"]
        return expr is call or (type(expr) is cst.Name and expr.value in names)

    for node, _ in placed(unit, cst.Call):
        name = callee_name(node)
        if name == "load_state_dict" and any(is_loaded(arg.value) for arg in node.args):
            return "the state dict it loads"
        moved = receiver(node)
        to_cpu = name == "cpu" or (name == "to" and node.args and string_value(node.args[0].value) == "cpu")
        if to_cpu and moved is not None and is_loaded(moved):
            return "what it loads (this code moves it to the CPU afterwards)"
    for read, _ in placed(unit, cst.Subscript):
        index = read.slice[0].slice
        key = string_value(index.value) if type(index) is cst.Index else None
        if key is not None and is_loaded(read.value) and any(word in key.lower() for word in _CHECKPOINT_KEYS):
            return f'the checkpoint it loads (read by `["{key}"]`)'
    return None
