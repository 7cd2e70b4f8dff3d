"""TL014: a stateful metric updated on every batch and never reset."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tensorlint.analysis import (
    METRIC_LIBRARIES,
    OLD_LIGHTNING_METRICS,
    ClassInfo,
    Facts,
    Role,
    Unit,
    callee_name,
    dotted_name,
    is_metric_class,
    is_training_iteration,
    lineage,
    metric_list_states,
    own_nodes,
    placed,
    receiver,
    self_attribute,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

# Metrics whose state is a list that every update extends with the batch's tensors (`cat` states),
# by class name without the `Binary`/`Multiclass`/`Multilabel` task prefix.
_LIST_STATES = frozenset(
    ["AUROC", "AveragePrecision", "PrecisionRecallCurve", "ROC", "CalibrationError", "LogAUC", "AUPRC",
     "RecallAtFixedPrecision", "PrecisionAtFixedRecall", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
     "SpearmanCorrCoef", "KendallRankCorrCoef", "CosineSimilarity", "CatMetric", "MeanAveragePrecision",
     "KernelInceptionDistance", "InceptionScore", "SpectralAngleMapper", "UniversalImageQualityIndex",
     "ErrorRelativeGlobalDimensionlessSynthesis", "SpectralDistortionIndex", "ROUGEScore", "BERTScore",
     "MutualInfoScore", "NormalizedMutualInfoScore", "AdjustedMutualInfoScore", "RandScore", "AdjustedRandScore"]
)  # fmt: skip
_TASKS = ("Binary", "Multiclass", "Multilabel")
_RESETS = frozenset(["reset", "compute_and_reset", "increment"])  # `MetricTracker.increment()`: a new epoch
_COPIES = frozenset(["to", "cuda", "cpu", "clone", "double", "float", "half"])  # a metric still


@dataclass(frozen=True)
class _Metric:
    """A metric object the code builds: its class, and whether its state is a growing list."""

    name: str  # the class, as written: `BinaryAUROC`, `MetricCollection`
    keeps_lists: bool
    # `pytorch_lightning.metrics` (Lightning 1.0-1.2) reset the state inside `compute()`.
    resets_on_compute: bool = False
    # A project's own meter: the attribute its `update` grows with tensors and no method empties.
    grown: str | None = None


class MetricNeverReset(Rule):
    """
    ## What it does
    Checks for torchmetrics and torcheval metric objects (`torchmetrics.classification.BinaryAUROC()`,
    `MetricCollection`, a project's own `torchmetrics.Metric` subclass, or a plain class of the
    project whose `update` appends tensors to an attribute that none of its methods empties: a
    meter that cannot be reset, even when it keeps `.detach()`ed values) that live across epochs, on
    the module or in a variable made before the epoch loop, are updated on every batch
    (`metric.update(...)`, `metric(...)`, `metric.forward(...)` in a `training_step`, a
    `validation_step`, `forward` or a loop over batches), and are never reset, re-created or
    logged as an object with Lightning's `self.log`, while either their state is a list or their
    `compute()` is read.

    ## Why is this bad?
    A metric's state only grows until `reset()`. Metrics that need every prediction (AUROC,
    average precision, precision-recall curves, retrieval metrics, `CatMetric`; states with
    `dist_reduce_fx="cat"`) append each batch's tensors to a list: without a reset the list grows
    by every batch of every epoch, on the metric's device, until the process ends, and every
    `compute()` works through all of it. By arithmetic (torchmetrics is not installed here, so
    not measured): `BinaryAUROC` keeps a float32 score and an int64 target per sample, 12 bytes,
    so 50,000 validation samples an epoch keep 60 MB after 100 epochs. Metrics with sum states do
    not grow in memory, but `compute()` then returns the value over every epoch so far instead of
    this epoch's. torchmetrics' Lightning guide says so: a metric whose value you compute and log
    yourself must be reset by hand at the end of the epoch; a metric object passed to
    `self.log(name, metric)` is computed and reset by Lightning.

    Not reported: metrics reset anywhere in the class (`on_validation_epoch_end`), through another
    object (`pl_module.val_acc.reset()` in a callback) or in the function that drives them;
    re-created outside `__init__` or inside the epoch loop; logged as objects
    (`self.log("acc", self.acc)`, `self.log_dict(self.metrics)`); made inside the function that
    updates them (an evaluation function that makes its own metric); updated in a plain function
    or method that nothing in the file calls in a loop (a test run once); passed in as arguments
    (who resets them is not visible); windowed `Running*` wrappers; functional metrics
    (`torchmetrics.functional.*`); and metrics with sum states whose `compute()` is never called
    (only the batch values of `metric(...)` are used: nothing grows and nothing reads the stale
    total); `pytorch_lightning.metrics` metrics whose `compute()` is called (Lightning 1.0-1.2 reset
    the state inside `compute()`). A Lightning `test_step` is reported like the other steps: Lightning does not reset a
    metric logged by value, so a second `trainer.test()` mixes both runs.

    ## Example
    ```python
    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_auroc.update(self(x), y)

    def on_validation_epoch_end(self):
        self.log("val_auroc", self.val_auroc.compute())
    ```

    Use instead:
    ```python
    def on_validation_epoch_end(self):
        self.log("val_auroc", self.val_auroc.compute())
        self.val_auroc.reset()
    ```

    ## Fix safety
    Where the epoch's `compute()` is read in one statement (in the class's one `*epoch*` method
    that computes the metric, or in the epoch loop around the loop over batches), the fix adds
    `metric.reset()` after the last statement there that uses the metric. It is unsafe: every
    later `compute()` then gives that epoch's value instead of the running total, which is the
    point, but code that relied on the total (a best-so-far, a cumulative plot) changes meaning.
    No fix where the value is returned, or where the epoch's end is not visible in the file.

    ## References
    - [torchmetrics: Metric.reset and the metric's states](https://lightning.ai/docs/torchmetrics/stable/pages/implement.html)
    - [torchmetrics in PyTorch Lightning: logging metric objects, resetting manually](https://lightning.ai/docs/torchmetrics/stable/pages/lightning.html)
    - [torcheval: Metric.reset](https://pytorch.org/torcheval/main/torcheval.metrics.html)
    """

    code = "TL014"
    fix_availability = "Sometimes"
    name = "metric-never-reset"
    summary = "Stateful metric updated every batch and never reset"
    grows_over_a_run = True
    invalid = (
        """
        import lightning as L
        from torchmetrics.classification import BinaryAUROC

        class Lit(L.LightningModule):
            def __init__(self, net):
                super().__init__()
                self.net = net
                self.val_auroc = BinaryAUROC()

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.val_auroc.update(self.net(x).sigmoid(), y)

            def on_validation_epoch_end(self):
                self.log("val_auroc", self.val_auroc.compute())
        """,
    )
    valid = (
        """
        import lightning as L
        from torchmetrics.classification import BinaryAUROC

        class Lit(L.LightningModule):
            def __init__(self, net):
                super().__init__()
                self.net = net
                self.val_auroc = BinaryAUROC()

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.val_auroc.update(self.net(x).sigmoid(), y)

            def on_validation_epoch_end(self):
                self.log("val_auroc", self.val_auroc.compute())
                self.val_auroc.reset()
        """,
        """
        import lightning as L
        from torchmetrics import Accuracy

        class Lit(L.LightningModule):
            def __init__(self, net):
                super().__init__()
                self.net = net
                self.train_acc = Accuracy(task="multiclass", num_classes=10)

            def training_step(self, batch, batch_idx):
                x, y = batch
                logits = self.net(x)
                self.train_acc(logits, y)
                self.log("train_acc", self.train_acc, on_epoch=True)
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        reported: set[tuple[int, str]] = set()
        for unit in facts.index.units:
            for call, place in placed(unit, cst.Call):
                updated = _updated_metric(call)
                if updated is None or (id(unit), updated) in reported:
                    continue
                metric = _metric_of(facts, unit, updated)
                if metric is None:
                    continue
                where = _never_reset(facts, unit, updated, list(place.loops), metric)
                if where is None:
                    continue
                reported.add((id(unit), updated))
                yield Report(
                    call, _message(updated, metric, where), _fix(facts, unit, updated, list(place.loops), metric)
                )


def _fix(facts: Facts, unit: Unit, updated: str, loops: list[cst.For | cst.While], metric: _Metric) -> NodeFix | None:
    """`metric.reset()` after the statement that reads the epoch's `compute()`: in the one
    `*epoch*` method of the class that computes it, or in the epoch loop around the batch loop."""
    if metric.grown is not None:
        return None  # a project's meter with no `reset()` to call
    if "." in updated:
        method = unit.method_unit()
        assert method is not None and method.cls is not None
        ends = [u for u in _methods(facts, method.cls) if "epoch" in u.name.lower() and _computes(u, updated)]
        if len(ends) != 1 or type(ends[0].node) is not cst.FunctionDef:
            return None
        block = ends[0].node.body
    else:
        batches = [i for i, loop in enumerate(loops) if is_training_iteration(loop, unit, facts.imports)]
        if not batches or batches[-1] == 0:
            return None
        block = loops[batches[-1] - 1].body
    if type(block) is not cst.IndentedBlock:
        return None
    reading = [i for i, statement in enumerate(block.body) if _reads(statement, updated)]
    last = block.body[reading[-1]] if reading else None
    if type(last) is not cst.SimpleStatementLine or any(type(s) is cst.Return for s in last.body):
        return None  # nothing to put it after, or a `return` ends the block there
    if not any(type(n) is cst.Call and callee_name(n) == "compute" for n in own_nodes(last)):
        return None
    reset = cst.SimpleStatementLine(
        [cst.Expr(cst.Call(cst.Attribute(cst.parse_expression(updated), cst.Name("reset"))))]
    )
    body = [*block.body[: reading[-1] + 1], reset, *block.body[reading[-1] + 1 :]]
    return NodeFix(
        f"Reset `{updated}` after its epoch's `compute()`",
        Applicability.UNSAFE,
        ((block, block.with_changes(body=body)),),
    )


def _reads(statement: cst.CSTNode, updated: str) -> bool:
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == updated for node in own_nodes(statement)
    )


def _message(updated: str, metric: _Metric, where: str) -> str:
    head = f"`{updated}` (`{metric.name}`) is updated {where} and never reset"
    if metric.grown is not None:
        return (
            f"{head}: its `{metric.grown}` grows by each batch's tensors, every epoch, for the whole run "
            f"(`.detach()` drops the graph, not the memory), and no method of `{metric.name}` empties it; "
            "make the meter afresh each epoch, or give it a `reset()` and call it at each epoch's end"
        )
    if metric.keeps_lists:
        return (
            f"{head}: its list state grows by each batch's tensors, every epoch, for the whole run, and "
            "`compute()` mixes all epochs; call `.reset()` after `compute()` at each epoch's end, or "
            "log the metric object with `self.log` (Lightning then resets it)"
        )
    return (
        f"{head}: its state sums over every epoch, so `compute()` gives the total since the start, not "
        "this epoch's value; call `.reset()` after `compute()` at each epoch's end, or log the metric "
        "object with `self.log` (Lightning then resets it)"
    )


def _updated_metric(call: cst.Call) -> str | None:
    """`self.acc` for `self.acc.update(p, y)`, `self.acc(p, y)`, `self.acc.forward(p, y)`."""
    if not call.args:
        return None
    func = call.func
    if type(func) is cst.Attribute and func.attr.value in ("update", "forward"):
        func = func.value
    return dotted_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None


def _metric_of(facts: Facts, unit: Unit, updated: str) -> _Metric | None:
    """The metric `self.x` or a variable holds: every assignment the module shows builds one."""
    assigned = [(v, u) for v, u in _assigned(facts, unit, updated) if not (type(v) is cst.Name and v.value == "None")]
    metrics = [_built_metric(facts, value, where) for value, where in assigned]
    if not metrics or any(m is None for m in metrics):
        return None
    return next(m for m in metrics if m is not None)


def _assigned(facts: Facts, unit: Unit, dotted: str) -> list[tuple[cst.BaseExpression, Unit]]:
    """What is assigned to `self.x` (in the class) or to a variable (in scope), with where."""
    head, _, attribute = dotted.partition(".")
    if attribute:
        if unit.cls is None or head != unit.self_name or "." in attribute:
            return []
        return [
            pair for cls in lineage(facts.index.classes, unit.cls) for pair in cls.attribute_values.get(attribute, [])
        ]
    binder = _binder(unit, head)
    return [(value, binder) for value in binder.bindings[head]] if binder is not None else []


def _built_metric(facts: Facts, value: cst.BaseExpression, unit: Unit, depth: int = 0) -> _Metric | None:
    """The metric a constructor call makes: `BinaryAUROC()`, `MetricCollection([...])`, a project
    subclass of `torchmetrics.Metric`, or a copy of one (`.clone(prefix="val_")`, `.to(device)`)."""
    if type(value) is not cst.Call or depth > 3:
        return None
    if type(value.func) is cst.Attribute and value.func.attr.value in _COPIES:
        source = value.func.value
        if type(source) is cst.Call:
            return _built_metric(facts, source, unit, depth + 1)
        copied = dotted_name(source)
        sources = _assigned(facts, unit, copied) if copied is not None else []
        return _built_metric(facts, sources[0][0], sources[0][1], depth + 1) if len(sources) == 1 else None
    qualified = facts.imports.qualify(value.func) or dotted_name(value.func) or ""
    name = qualified.rsplit(".", 1)[-1]
    if name.startswith("Running"):
        return None  # `Running(MeanMetric(), window=n)`, `RunningMean`: a window, bounded by design
    if qualified.startswith(METRIC_LIBRARIES) and ".functional" not in qualified and name[:1].isupper():
        inner = [_built_metric(facts, arg, unit, depth + 1) for arg in _arguments(value)]
        keeps = _keeps_lists(name) or any(m is not None and m.keeps_lists for m in inner)
        return _Metric(name, keeps, qualified.startswith(OLD_LIGHTNING_METRICS))
    local = facts.index.classes.get(name)
    if local is not None and is_metric_class(facts.index.classes, local):
        old = any(
            (b or "").startswith(OLD_LIGHTNING_METRICS)
            for c in lineage(facts.index.classes, local)
            for b in c.base_names
        )
        return _Metric(name, bool(metric_list_states(facts.index.classes, local)), old)
    grown = _grown_for_good(facts, local) if local is not None else None
    return _Metric(name, True, grown=grown) if grown is not None else None


def _grown_for_good(facts: Facts, cls: ClassInfo) -> str | None:
    """The attribute a plain class's `update` grows with tensors (`self.embeddings.append(e.detach())`,
    `self.bank = torch.cat([self.bank, e])`) where no method of the class empties or replaces it:
    a meter that cannot be reset. (A graph kept there is TL001's; this is what `.detach()` leaves.)"""
    classes = lineage(facts.index.classes, cls)
    for store in facts.stores:
        unit = store.unit
        if unit.name != "update" or unit.cls not in classes or not store.grows:
            continue
        attribute = self_attribute(unit, store.container)
        if attribute is None or not store.value.tensor or store.value.graph:
            continue
        replaced = any(
            u.name != "__init__" and u is not unit for c in classes for _, u in c.attribute_values.get(attribute, [])
        )
        if (
            not replaced
            and not any(attribute in c.managed for c in classes)
            and attribute not in facts.index.foreign_managed
        ):
            return attribute
    return None


def _arguments(call: cst.Call) -> list[cst.BaseExpression]:
    """The argument expressions, and the items of list and dict displays among them (a collection's metrics)."""
    found: list[cst.BaseExpression] = []
    for arg in call.args:
        value = arg.value
        if isinstance(value, (cst.List, cst.Tuple)):
            found += [element.value for element in value.elements]
        elif type(value) is cst.Dict:
            found += [element.value for element in value.elements if type(element) is cst.DictElement]
        else:
            found.append(value)
    return found


def _keeps_lists(name: str) -> bool:
    for task in _TASKS:
        name = name.removeprefix(task)
    return name in _LIST_STATES or name.startswith("Retrieval")


def _never_reset(
    facts: Facts, unit: Unit, updated: str, loops: list[cst.For | cst.While], metric: _Metric
) -> str | None:
    """Where the metric is updated batch after batch, across epochs, with nothing resetting it;
    None when it is reset, re-created, logged as an object, or the update does not repeat."""
    if "." in updated:  # `self.acc`: the class drives it, every epoch
        method = unit.method_unit()
        if method is None or method.cls is None:
            return None
        where, driver = _per_batch(facts, unit, method, loops), _methods(facts, method.cls)
        attribute = updated.partition(".")[2]
        recreated = any(
            u.name != "__init__"
            for c in lineage(facts.index.classes, method.cls)
            for _, u in c.attribute_values.get(attribute, [])
        )
        if where is None or recreated or any(_logged_as_object(u, updated) for u in driver):
            return None
        if _reset_from_outside(facts, attribute):
            return None
    else:
        where, driver = _per_epoch_loop(facts, unit, updated, loops), [unit]
        if where is None:
            return None
    if any(_resets(facts, u, updated) for u in driver):
        return None
    if metric.resets_on_compute and any(_computes(u, updated) for u in driver):
        return None
    # A sum state is harmless unless an epoch's value is read: at an epoch's end, or after the
    # loop over batches that updates it.
    readers = [u for u in driver if "epoch" in u.name.lower() or u is unit or u is unit.method_unit()]
    if not metric.keeps_lists and not any(_computes(u, updated) for u in readers):
        return None
    return where


def _methods(facts: Facts, cls: ClassInfo) -> list[Unit]:
    """The methods of the class and of its bases in the file: the code that drives its metrics."""
    return [facts.index.method_units[id(m)] for c in lineage(facts.index.classes, cls) for m in c.methods.values()]


def _reset_from_outside(facts: Facts, attribute: str) -> bool:
    """`pl_module.val_acc.reset()` in a callback, `model.val_acc.reset()` in a script."""
    for unit in facts.index.units:
        for call, _ in placed(unit, cst.Call):
            owner = receiver(call)
            if (
                callee_name(call) in _RESETS
                and owner is not None
                and (dotted_name(owner) or "").endswith(f".{attribute}")
            ):
                return True
    return False


def _per_batch(facts: Facts, unit: Unit, method: Unit, loops: list[cst.For | cst.While]) -> str | None:
    """A method's update that repeats: in a step method or `forward`, or in a loop over batches
    that itself repeats (inside a loop over epochs, or in a method called in a loop)."""
    if Role.FORWARD in method.roles or Role.STEP in method.roles:
        return f"in `{method.cls.name if method.cls else ''}.{method.name}` on every batch".replace("`.", "`")
    batches = [i for i, loop in enumerate(loops) if is_training_iteration(loop, unit, facts.imports)]
    if batches and (batches[-1] > 0 or _called_in_loop(facts, method)):
        return f"in a loop over batches in every call of `{method.name}`"
    return None


def _per_epoch_loop(facts: Facts, unit: Unit, updated: str, loops: list[cst.For | cst.While]) -> str | None:
    """A variable's metric, updated in a loop over batches: a module-level one, in a function called
    in a loop (once per epoch); a local one, inside an outer loop (epochs) that does not make it afresh."""
    batches = [i for i, loop in enumerate(loops) if is_training_iteration(loop, unit, facts.imports)]
    if not batches:
        return None
    binder = _binder(unit, updated)
    if binder is facts.index.module_unit and unit is not binder:
        return f"in a loop over batches in every call of `{unit.name}`" if _called_in_loop(facts, unit) else None
    outer = loops[: batches[-1]]
    if binder is None or not outer or any(_assigns(loop, updated) for loop in outer):
        return None  # made afresh per epoch, or only one pass over the data
    return "in a loop over batches inside a loop over epochs"


def _called_in_loop(facts: Facts, function: Unit) -> bool:
    """Whether the module calls the function (`evaluate(...)`, `self.validate()`) inside a loop."""
    for unit in facts.index.units:
        for call, place in placed(unit, cst.Call):
            if place.loops and callee_name(call) == function.name:
                return True
    return False


def _binder(unit: Unit, name: str) -> Unit | None:
    """The unit whose code binds `name`, looking outwards."""
    current: Unit | None = unit
    while current is not None:
        if name in current.bindings:
            return current
        current = current.parent
    return None


def _assigns(loop: cst.For | cst.While, name: str) -> bool:
    return any(
        type(node) is cst.Assign and any(dotted_name(t.target) == name for t in node.targets)
        for node in own_nodes(loop.body)
    )


def _resets(facts: Facts, unit: Unit, updated: str) -> bool:
    """`metric.reset()`, or a reset through something dynamic (a loop over metrics, `getattr`);
    not another metric's."""
    for call, _ in placed(unit, cst.Call):
        if callee_name(call) not in _RESETS:
            continue
        owner = receiver(call)
        name = dotted_name(owner) if owner is not None else None
        if name is None or name.startswith(updated):
            return True
        if "." not in name and _metric_of(facts, unit, name) is None:
            return True  # `for metric in metrics: metric.reset()`
    return False


def _computes(unit: Unit, updated: str) -> bool:
    for call, _ in placed(unit, cst.Call):
        owner = receiver(call)
        if callee_name(call) == "compute" and owner is not None and (dotted_name(owner) or "").startswith(updated):
            return True
    return False


def _logged_as_object(unit: Unit, updated: str) -> bool:
    """`self.log("acc", self.acc)`, `self.log_dict(self.metrics)`: Lightning computes and resets it."""
    for call, _ in placed(unit, cst.Call):
        if callee_name(call) not in ("log", "log_dict"):
            continue
        for value in _arguments(call):
            if dotted_name(value) == updated:
                return True
    return False
