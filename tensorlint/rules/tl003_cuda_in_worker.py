"""TL003: CUDA work in code that DataLoader runs in worker processes."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    CudaWork,
    Facts,
    Role,
    Unit,
    argument,
    callee_name,
    cuda_work_in,
    lineage,
    placed,
    with_keyword,
    without_argument,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule


class CudaInWorker(Rule):
    """
    ## What it does
    Checks for code that allocates on, or initialises, CUDA inside code that a DataLoader with
    workers runs in its worker processes: the functions passed as `collate_fn=` or
    `worker_init_fn=`, `__getitem__`, `__getitems__` and `__iter__` of a dataset that such a
    loader is built over, the same methods of any `Dataset`/`IterableDataset` subclass and
    functions named like `collate`/`worker_init` when no loader is visible (a library module:
    whoever loads it with `num_workers > 0` runs them in workers), and what that code calls there: helper methods
    (`self._load(path)`), functions of the module, and the `__call__` of transforms stored on the
    dataset (`self.transform = ToDevice()`, a `Compose([...])` of them, or a transform the file
    passes where it builds the dataset: `Clips(paths, augment=GpuJitter())`); a function of
    another module of the project that the worker code calls and that says `.cuda()` or a
    `"cuda"` device (itself, or a function of its module it calls) is reported at that call,
    `transforms.log_mel(wave)`, since only the dataset's module shows that workers run it. CUDA work is
    `.cuda()`, `.to("cuda")`, `.to(device)` or `device=device` where `device` names CUDA (also
    `self.device` that `__init__` takes from a parameter the file's `Collator(torch.device("cuda"))`
    or `Collator(device)` after `device = "cuda"` gives, or after `device = torch.device(args.device)`
    where `parser.add_argument("--device", default="cuda")`; a parameter that `functools.partial`
    binds to a CUDA device; a `device: str = "cuda"` default), and `torch.cuda.*` calls other than
    seeding, queries, NVTX ranges (`torch.cuda.nvtx.range_push`: a profiler's marks on the host)
    and autocast (unless it asks for bfloat16).

    ## Why is this bad?
    With `num_workers > 0` this code runs in separate processes. Under the `fork` start method
    (Linux's default before Python 3.14), once the parent has used CUDA the worker fails with
    `RuntimeError: Cannot re-initialize CUDA in forked subprocess`. Under `spawn` or
    `forkserver`, or when the parent has not touched CUDA yet, each worker creates its own CUDA
    context: about 636 MiB of GPU memory per worker measured on an NVIDIA H200 (2.5 GiB for
    four workers), invisible to `torch.cuda.memory_allocated()`. PyTorch's data loading docs
    advise against returning CUDA tensors from workers and recommend `pin_memory=True`.

    Not reported: code that every loader visibly running it keeps in the main process
    (`num_workers` absent or a literal `0`; for a dataset or collate function whose file builds no
    loader, the loaders that the project's other modules build over it, where they import it from
    that file or from its package: `DataLoader(RandomNoiseDataset(shape))` in the script beside
    it, `StatefulDataLoader(ds, collate_fn=sft if not packed else packed_collate)` in a recipe, as
    `DataLoader` with `partial(collate, pad=0)`; and the loaders of a module that the script
    making the dataset imports and hands it to, `Trainer(model, CharDataset(text), config)`; a
    loader's `num_workers=config.num_workers` counts as 0 where the program around its module, the
    modules importing it and those they import, sets the setting to a literal `0` and nothing
    else, and no option, config key or settings file of the project names it), a dataset that no
    loader of its file runs and whose `__init__` sets up CUDA itself (`torch.cuda.Stream()`, tensors
    made on the device: it is made in the process that trains, and a forked worker could not use
    it), worker code that runs a collective of `torch.distributed` (`dist.all_reduce(max_len)` in a
    collate that pads every rank's batch alike: a worker is in no process group, so the function is
    written for the main process, which calls it itself), a function named
    like `worker_init` that the file passes to a process pool instead
    (`ProcessPoolExecutor(initializer=_worker_init)`), a helper's `device="cuda"` default when every call
    of it in the file passes the device and none passes CUDA (`random_poses(n, device=self.device)`
    from a dataset whose device defaults to the CPU), `.to(dtype)`, `.to("cpu")`,
    `torch.cuda.manual_seed`, and `torch.cuda.amp.autocast()` disabled or in float16: it only sets
    thread-local flags (on an H200, in forked workers after the parent used CUDA, it ran without
    initialising CUDA; with `dtype=torch.bfloat16` it asks the GPU whether bfloat16 is supported,
    and the worker raised `RuntimeError`).

    ## Example
    ```python
    def collate(batch):
        return torch.stack(batch).cuda()

    loader = DataLoader(dataset, batch_size=32, num_workers=4, collate_fn=collate)
    ```

    Use instead:
    ```python
    def collate(batch):
        return torch.stack(batch)

    loader = DataLoader(dataset, batch_size=32, num_workers=4, collate_fn=collate, pin_memory=True)
    for batch in loader:
        batch = batch.cuda(non_blocking=True)
    ```

    ## Fix safety
    The fix drops the CUDA move from the worker code (`x.cuda()` becomes `x`, `device=dev` is
    removed) and adds `pin_memory=True` to the DataLoader when it has no `pin_memory` argument.
    It is unsafe: the batch now arrives on the CPU, so the training loop must move it
    (`batch.to(device, non_blocking=True)`), which the fix cannot place for you. `torch.cuda.*`
    calls and `.to(device, dtype)` get no fix.

    ## References
    - [torch.utils.data: multi-process data loading and memory pinning](https://docs.pytorch.org/docs/stable/data.html)
    - [Multiprocessing best practices: CUDA in multiprocessing](https://docs.pytorch.org/docs/stable/notes/multiprocessing.html)
    """

    code = "TL003"
    fix_availability = "Sometimes"
    name = "cuda-in-dataloader-worker"
    summary = "CUDA work in code that DataLoader runs in worker processes"
    invalid = (
        """
        import torch
        from torch.utils.data import DataLoader

        def collate(batch):
            return torch.stack(batch).cuda()

        loader = DataLoader(list(range(8)), batch_size=4, num_workers=4, collate_fn=collate)
        """,
        """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Points(Dataset):
            def __len__(self):
                return 100

            def __getitem__(self, i):
                return torch.randn(3, device="cuda")

        loader = DataLoader(Points(), batch_size=8, num_workers=2)
        """,
    )
    valid = (
        """
        import torch
        from torch.utils.data import DataLoader

        def collate(batch):
            return torch.stack(batch).cuda()

        loader = DataLoader(list(range(8)), batch_size=4, num_workers=0, collate_fn=collate)
        """,
        """
        import torch
        from torch.utils.data import DataLoader

        def collate(batch):
            return torch.stack(batch)

        loader = DataLoader(list(range(8)), batch_size=4, num_workers=4, collate_fn=collate, pin_memory=True)
        for batch in loader:
            batch = batch.cuda(non_blocking=True)
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        built_for_main: dict[int, bool] = {}  # id(worker) -> `_built_for_the_main_process`: one walk per dataset
        for work in facts.cuda_work:
            worker = work.unit.worker_unit()
            if worker is None or _main_process_elsewhere(facts, worker):
                continue
            if _runs_a_collective(facts, work.unit) or _runs_a_collective(facts, worker):
                continue  # a worker is in no process group: written for the main process
            if id(worker) not in built_for_main:
                built_for_main[id(worker)] = _built_for_the_main_process(facts, worker)
            if built_for_main[id(worker)]:
                continue
            yield Report(
                work.node,
                f"{work.what} in {worker.roles[Role.WORKER]}: under fork it raises RuntimeError "
                "once the parent has used CUDA, otherwise every worker creates its own CUDA context "
                "(~636 MiB each); keep tensors on the CPU here and move them in the training loop "
                "(`pin_memory=True`)",
                _fix(work, worker),
            )


def _main_process_elsewhere(facts: Facts, worker: Unit) -> bool:
    """Worker code that this file builds no loader for, where the project's other modules build
    loaders over it and none of them has workers (`DataLoader(RandomNoiseDataset(shape))` in the
    script beside the dataset's module)."""
    if worker.run_elsewhere_as is None or worker.loaders or facts.project is None or facts.path is None:
        return False  # (a loader of this file with workers runs it too)
    loaders = facts.project.loaders_elsewhere(facts.path, worker.run_elsewhere_as)
    return bool(loaders) and not any(loaders)


def _runs_a_collective(facts: Facts, unit: Unit) -> bool:
    """Whether the function calls a collective of `torch.distributed` (`dist.all_reduce(t)`), which
    only the ranks of a process group run together."""
    for call, _ in placed(unit, cst.Call):
        name = facts.index.imports.qualify(call.func)
        if name is not None and name.startswith("torch.distributed.") and name.rpartition(".")[2] in _COLLECTIVES:
            return True
    return False


_COLLECTIVES = frozenset(
    [
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "all_reduce",
        "all_to_all",
        "all_to_all_single",
        "barrier",
        "broadcast",
        "broadcast_object_list",
        "gather",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "scatter",
    ]
)


def _built_for_the_main_process(facts: Facts, worker: Unit) -> bool:
    """A dataset that no loader of this file runs and whose `__init__` sets up CUDA itself
    (`self.stream = torch.cuda.Stream()`, tensors made on the device): it is made in the process
    that trains, and a forked worker could not use it, so the CUDA work of its item methods is
    by design."""
    if worker.run_elsewhere_as is None or worker.loaders or worker.cls is None:
        return False
    for cls in lineage(facts.index.classes, worker.cls):
        init = cls.methods.get("__init__")
        unit = facts.index.method_units.get(id(init)) if init is not None else None
        if unit is not None and cuda_work_in(facts, unit):
            return True
    return False


def _fix(work: CudaWork, worker: Unit) -> NodeFix | None:
    """Keep the tensor on the CPU in the worker, and pin the loader's memory for the transfer."""
    call = work.node
    if work.device is None and callee_name(call) != "cuda":
        return None  # torch.cuda.* calls: nothing to drop
    if work.device is not None and callee_name(call) != "to":
        on_cpu: cst.BaseExpression = without_argument(call, work.device)  # torch.zeros(..., device=dev)
    elif all(arg is work.device or (arg.keyword and arg.keyword.value in _MOVE_OPTIONS) for arg in call.args):
        on_cpu = call.func.value if type(call.func) is cst.Attribute else call  # x.cuda() -> x
    else:
        return None  # .to(device, dtype): the dtype part must stay
    replacements: list[tuple[cst.CSTNode, cst.CSTNode]] = [(call, on_cpu)]
    for loader in worker.loaders:
        if argument(loader, "pin_memory", 7) is None:
            replacements.append((loader, with_keyword(loader, "pin_memory", cst.Name("True"))))
    return NodeFix(
        "Keep the tensor on the CPU in the worker; move the batch in the training loop (pin_memory=True)",
        Applicability.UNSAFE,
        tuple(replacements),
    )


_MOVE_OPTIONS = frozenset(["non_blocking", "copy", "device", "memory_format"])
