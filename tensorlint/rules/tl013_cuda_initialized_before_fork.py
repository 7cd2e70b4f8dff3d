"""TL013: CUDA initialised in the parent before DataLoader workers that use it are forked, or an
unpicklable `collate_fn`/`worker_init_fn` under spawn."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    CudaWork,
    Facts,
    LoaderCall,
    Role,
    Unit,
    argument,
    callee_name,
    dotted_name,
    own_nodes,
    placed,
    resolve_callable,
    string_value,
)
from tensorlint.rule import Report, Rule

# torch.cuda functions that do not create the CUDA context (queries, lazily queued seeding,
# allocator statistics that answer empty before initialisation, autocast and the grad scaler).
_NOT_INITIALISING = frozenset(
    ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all",
     "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
     "memory_stats", "memory_summary", "get_arch_list", "is_bf16_supported"]
)  # fmt: skip
_NOT_INITIALISING_MODULES = ("torch.cuda.amp.", "torch.cuda.nvtx.")
_PICKLING = ("spawn", "forkserver")
_CONSEQUENCES = (
    "under spawn or forkserver (macOS, Windows, and Linux from Python 3.14) each worker builds its own "
    "CUDA context instead (~636 MiB per worker on an H200)"
)


class CudaInitializedBeforeFork(Rule):
    """
    ## What it does
    Checks for two ways a DataLoader with workers (`num_workers > 0`) fails when its workers start:

    - the parent process initialises CUDA (`.cuda()`, `.to("cuda")`, a tensor made with
      `device="cuda"`, `torch.cuda.set_device()`, `torch.cuda.current_device()`) at module level,
      in the function that builds the loader or in a function that calls that one, while the loader's worker code (its dataset's
      `__getitem__`/`__iter__`, `collate_fn`, `worker_init_fn`, as TL003 finds it) uses CUDA, and
      the start method is `fork` (Linux's default before Python 3.14: no `multiprocessing_context`
      and no `set_start_method` in the module). The finding points at the parent's initialisation;
      TL003 reports the worker's CUDA work.
    - a lambda or a nested function (or a `functools.partial` of one, or what a factory function
      returns) passed as `collate_fn` or `worker_init_fn` to such a loader when the module selects
      `spawn` or `forkserver` (`multiprocessing_context="spawn"`, `get_context("spawn")`,
      `set_start_method("spawn")`).

    ## Why is this bad?
    Under `fork`, a child process cannot use CUDA once the parent has initialised it: the first
    CUDA call in a worker raises `RuntimeError: Cannot re-initialize CUDA in forked subprocess. To
    use CUDA with multiprocessing, you must use the 'spawn' start method` (PyTorch's
    multiprocessing notes, "CUDA in multiprocessing" and "Poison fork"). Measured on an NVIDIA
    H200 with four workers: worker 0 fails with that error when the parent's model is on the
    GPU; with `spawn` or `forkserver` the loader runs, but the workers' CUDA contexts take
    2.5 GiB (about 636 MiB each), invisible to `torch.cuda.memory_allocated()`.

    Under `spawn` and `forkserver` the workers receive `collate_fn` and `worker_init_fn` by
    pickling, which stores functions by their importable name: a lambda or a function defined
    inside another cannot be pickled (`Can't pickle <function <lambda>>`, `Can't pickle local
    object 'main.<locals>.collate'`), and the first iteration fails. The DataLoader docs warn:
    "If the `spawn` start method is used, `worker_init_fn` cannot be an unpicklable object, e.g.,
    a lambda function." Under `fork` nothing is pickled and they work.

    Not reported: loaders without workers (`num_workers` absent or `0`), a start method the
    code does not spell out (a variable), `torch.cuda.is_available()`, `device_count()` and
    seeding (they do not create the context), CUDA first used after a `persistent_workers=True`
    loader has started its workers, worker code that does not use CUDA (the parent may use CUDA
    freely then), and module-level functions, methods and `functools.partial` of module-level
    functions as callbacks.

    ## Example
    ```python
    class Crops(Dataset):
        def __getitem__(self, i):
            return self.images[i].cuda()

    model = Net().cuda()
    loader = DataLoader(Crops(images), batch_size=64, num_workers=4)
    ```

    Use instead:
    ```python
    class Crops(Dataset):
        def __getitem__(self, i):
            return self.images[i]

    model = Net().cuda()
    loader = DataLoader(Crops(images), batch_size=64, num_workers=4, pin_memory=True)
    for batch in loader:
        batch = batch.cuda(non_blocking=True)
    ```

    ## Fix safety
    No fix is offered. The right change is in the worker code (TL003's fix keeps it on the CPU);
    moving the parent's initialisation after the loop, or switching the loader to `spawn`, each
    change the program elsewhere (spawn also needs picklable datasets and callbacks and a
    `if __name__ == "__main__":` guard), and a lambda's body may read names of its scope that a
    module-level function would have to take as arguments.

    ## References
    - [Multiprocessing best practices: CUDA in multiprocessing, Poison fork](https://docs.pytorch.org/docs/stable/notes/multiprocessing.html)
    - [torch.utils.data: multi-process data loading, platform-specific behaviors](https://docs.pytorch.org/docs/stable/data.html#multi-process-data-loading)
    """

    code = "TL013"
    name = "cuda-initialized-before-fork"
    summary = "CUDA initialised in the parent before DataLoader workers that use it fork, or an unpicklable callback under spawn"
    invalid = (
        """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Crops(Dataset):
            def __len__(self):
                return 100

            def __getitem__(self, i):
                return torch.randn(3, 32, 32).cuda()

        model = torch.nn.Linear(8, 8).cuda()
        loader = DataLoader(Crops(), batch_size=8, num_workers=4)
        """,
        """
        import torch
        from torch.utils.data import DataLoader

        def main(dataset):
            loader = DataLoader(
                dataset, batch_size=8, num_workers=4, multiprocessing_context="spawn",
                collate_fn=lambda batch: torch.stack(batch),
            )
            return loader
        """,
    )
    valid = (
        """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Crops(Dataset):
            def __len__(self):
                return 100

            def __getitem__(self, i):
                return torch.randn(3, 32, 32)

        model = torch.nn.Linear(8, 8).cuda()
        loader = DataLoader(Crops(), batch_size=8, num_workers=4, pin_memory=True)
        """,
        """
        import torch
        from torch.utils.data import DataLoader

        def collate(batch):
            return torch.stack(batch)

        def main(dataset):
            return DataLoader(dataset, batch_size=8, num_workers=4, multiprocessing_context="spawn", collate_fn=collate)
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        module_method = _module_start_method(facts)
        reported: set[int] = set()
        for loader in facts.index.loader_calls:
            if not loader.has_workers:
                continue
            method = _start_method(facts, loader) or module_method
            if method in (None, "fork"):
                report = _parent_initialises(facts, loader)
            elif method in _PICKLING:
                yield from _unpicklable(facts, loader, method)
                continue
            else:
                continue  # a context the code does not spell out
            if report is not None and id(report.node) not in reported:
                reported.add(id(report.node))
                yield report


def _parent_initialises(facts: Facts, loader: LoaderCall) -> Report | None:
    """The parent's first CUDA initialisation before the loader's workers fork, when they use CUDA."""
    in_workers = [
        work
        for work in facts.cuda_work
        if _initialises(facts, work) and any(node is loader.node for node in _worker_loaders(work.unit))
    ]
    if not in_workers:
        return None
    order = {id(node): position for position, node in enumerate(own_nodes(loader.unit.node))}
    started = _workers_started_at(loader, order)
    parent_side = {id(facts.index.module_unit), id(loader.unit), *map(id, _callers(facts, loader.unit))}
    for work in facts.cuda_work:
        if id(work.unit) not in parent_side or _worker_loaders(work.unit) or not _initialises(facts, work):
            continue
        if started is not None and work.unit is loader.unit and order[id(work.node)] > started:
            continue  # persistent workers already forked before this
        worker = in_workers[0].unit.worker_unit()
        assert worker is not None
        return Report(
            work.node,
            f"{work.what} initialises CUDA before the DataLoader's workers start, and their code "
            f"({worker.roles[Role.WORKER]}) uses CUDA: under fork (Linux's default before Python 3.14) "
            f"every worker raises `RuntimeError: Cannot re-initialize CUDA in forked subprocess`; "
            f"{_CONSEQUENCES}; keep the worker code on the CPU",
        )
    return None


def _callers(facts: Facts, unit: Unit) -> list[Unit]:
    """The functions of the module that call this one by name: `loader = build_loader(cfg)` in `main`."""
    if type(unit.node) is not cst.FunctionDef:
        return []
    return [
        caller
        for caller in facts.index.units
        if any(
            type(call.func) is cst.Name and caller.lookup_def(call.func.value) is unit
            for call, _ in placed(caller, cst.Call)
        )
    ]


def _unpicklable(facts: Facts, loader: LoaderCall, method: str) -> Iterator[Report]:
    for keyword, position in (("collate_fn", 8), ("worker_init_fn", None)):
        given = argument(loader.node, keyword, position)
        if given is None:
            continue
        local = [unit for unit, _, _ in resolve_callable(facts.index, given, loader.unit) if _is_local(facts, unit)]
        if not local:
            continue
        what = "a lambda" if type(local[0].node) is cst.Lambda else f"the nested function `{local[0].name}`"
        yield Report(
            given,
            f"`{keyword}` is {what}, given to a DataLoader with workers under {method}: its workers receive "
            f"it by pickling, which fails on the first iteration (`Can't pickle local object` / `Can't "
            f"pickle <lambda>`), once per loader start; under fork it is not pickled and works; define it "
            "at module level (bind arguments with `functools.partial`)",
        )


def _is_local(facts: Facts, unit: Unit) -> bool:
    """A lambda, or a function nested in a function: pickle cannot find it by name."""
    if type(unit.node) is cst.Lambda:
        return True
    return not unit.is_method and unit.parent is not None and unit.parent is not facts.index.module_unit


def _initialises(facts: Facts, work: CudaWork) -> bool:
    qualified = facts.imports.qualify(work.node.func) or ""
    if qualified.startswith(_NOT_INITIALISING_MODULES):
        return False
    return not (qualified.startswith("torch.cuda.") and qualified.rsplit(".", 1)[-1] in _NOT_INITIALISING)


def _worker_loaders(unit: Unit) -> list[cst.Call]:
    """The loaders whose workers run this code (empty: it runs in the main process)."""
    worker = unit.worker_unit()
    return worker.loaders if worker is not None else []


def _start_method(facts: Facts, loader: LoaderCall) -> str | None:
    """The loader's own `multiprocessing_context`: its name, "unknown", or None when not given."""
    context = argument(loader.node, "multiprocessing_context", 10)
    if context is None:
        return None
    if type(context) is cst.Name:
        values = loader.unit.lookup_bindings(context.value) or facts.index.module_unit.bindings.get(context.value, [])
        context = values[0] if len(values) == 1 else context
    return _method_named(context) or "unknown"


def _method_named(expr: cst.BaseExpression) -> str | None:
    """ "spawn" for `"spawn"` and `multiprocessing.get_context("spawn")`."""
    if type(expr) is cst.Call and callee_name(expr) == "get_context" and expr.args:
        expr = expr.args[0].value
    return string_value(expr)


def _module_start_method(facts: Facts) -> str | None:
    """What `set_start_method(...)` anywhere in the module selects ("unknown" when not a literal)."""
    for unit in facts.index.units:
        for call, _ in placed(unit, cst.Call):
            if callee_name(call) == "set_start_method" and call.args:
                return _method_named(call.args[0].value) or "unknown"
    return None


def _workers_started_at(loader: LoaderCall, order: dict[int, int]) -> int | None:
    """For `persistent_workers=True`: where in its function the loader is first iterated (its
    workers fork then and are kept); None otherwise, or when it is not iterated there."""
    persistent = argument(loader.node, "persistent_workers")
    if not (type(persistent) is cst.Name and persistent.value == "True"):
        return None
    names = {
        dotted_name(target.target)
        for node, _ in placed(loader.unit, cst.Assign)
        if node.value is loader.node
        for target in node.targets
    } - {None}
    iterations = [node for node, _ in placed(loader.unit, cst.For) if dotted_name(node.iter) in names] + [
        call
        for call, _ in placed(loader.unit, cst.Call)
        if callee_name(call) == "iter" and call.args and dotted_name(call.args[0].value) in names
    ]
    return min((order[id(node)] for node in iterations), default=None)
