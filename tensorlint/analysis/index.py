"""The first pass: what the module defines and how its functions are used.

One traversal collects imports, classes (bases, methods, attributes and how they are
managed), every function with the names it binds, and the calls that give functions a role:
hook registrations make forward code, DataLoader arguments make worker code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, TypeVar, cast

import libcst as cst

from tensorlint.analysis.names import (
    LOADER_CLASSES,
    Imports,
    argument,
    callee_name,
    class_words,
    dotted_name,
    is_literal,
    literal_bool,
    receiver,
    references,
    steps_an_optimizer,
    string_value,
)
from tensorlint.analysis.values import is_loss_name, is_torch_module_class
from tensorlint.analysis.walk import LEAVES, SCOPES, children, contains, same_code, walk

Function = cst.FunctionDef | cst.Lambda | cst.Module
_Handler = Callable[[Any, Any], None]  # _Indexer.visit_X or leave_X, unbound


class Role(str, Enum):
    FORWARD = "forward"  # nn.Module.forward, or a method aliased as forward
    MODULE_HOOK = "module hook"  # register_forward_hook(fn) and friends: fn(module, input, output)
    TENSOR_HOOK = "tensor hook"  # tensor.register_hook(fn): fn(grad)
    WORKER = "worker"  # runs in DataLoader worker processes
    STEP = "step"  # a method a framework calls once per batch: `training_step`, a metric's `update`


NO_GRAD_NAMES = frozenset(["no_grad", "inference_mode"])
OWN_ITEMS = "[]"  # the key of ClassInfo.item_values for what `self[key] = value` puts in the object itself

# Methods that frameworks call once per batch, like `forward`: Lightning's steps and batch hooks,
# the HF Trainer's, metrics' and meters' `update`/`process`, callable objects. A container on
# `self` that one of them grows gains an entry per batch.
STEP_METHODS = frozenset(
    ["training_step", "validation_step", "test_step", "predict_step", "train_step", "compute_loss",
     "update", "process", "__call__",
     # Lightning's hooks around each step's backward pass and optimizer step
     "on_before_backward", "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad"]
)  # fmt: skip
# Per-step methods that training code hands its outputs, graph included: a loss to a meter's `update`,
# a batch's outputs to `training_step`. (A scheduler's `step_prk` or a logits processor's `__call__`
# runs in inference: their tensors carry no graph by default.)
GRAPH_GIVEN_METHODS = frozenset(["training_step", "train_step", "compute_loss", "update"])
# Lightning runs these under `torch.no_grad()` (or inference mode): what they compute has no graph.
NO_GRAD_STEP_METHODS = frozenset(["validation_step", "test_step", "predict_step"])
# LightningModule's per-batch methods, which Lightning calls with `(batch, batch_idx)`.
LIGHTNING_STEPS = NO_GRAD_STEP_METHODS | {"training_step"}
# Steps that train: a per-step method's state leaks only if the step builds a graph from it.
TRAINING_STEPS = frozenset(["training_step", "train_step"])


def is_step_method(name: str) -> bool:
    """Per-batch methods by their names: the frameworks' (`training_step`, `on_train_batch_end`),
    any `*_step`/`*_batch` method (`eval_step`, `watch_batch`), and per-iteration hooks
    (`after_train_iter`, `on_iteration_end`). A bare `step` is an optimizer's."""
    words = name.lower().split("_")
    if words[0] in ("after", "before", "on") and {"iter", "iteration"} & set(words):
        return True
    return name in STEP_METHODS or (name != "step" and bool({"step", "batch"} & set(words)))


MODULE_HOOK_REGISTRATIONS = frozenset(
    [
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_backward_hook",
        "register_full_backward_pre_hook",
        "register_module_forward_hook",
        "register_module_forward_pre_hook",
        "register_module_full_backward_hook",
    ]
)
# Methods of lists that tensors do not have.
_LIST_ONLY_METHODS = frozenset(["append", "extend", "insert"])
TENSOR_HOOK_REGISTRATIONS = frozenset(["register_hook", "register_post_accumulate_grad_hook"])
# Methods that only modules have: calling one on a name is evidence that it holds a module.
MODULE_ONLY_METHODS = frozenset(
    [
        "train",
        "eval",
        "parameters",
        "named_parameters",
        "modules",
        "children",
        "named_modules",
        "named_children",
        "buffers",
        "named_buffers",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
    ]
)
# Calls that make a tensor with no history: assigned to a running total, they start it afresh.
_NEW_TENSORS = frozenset(
    ["zeros", "ones", "empty", "full", "tensor", "zeros_like", "ones_like", "empty_like", "full_like",
     "new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "zero_"]
)  # fmt: skip

# Calls that free or bound a container: one of them anywhere in the class means it is managed.
CONTAINER_MANAGEMENT = frozenset(["clear", "pop", "popleft", "popitem", "remove"])
_DATASET_METHODS = ("__getitem__", "__getitems__", "__iter__")


@dataclass(frozen=True)
class Place:
    """Where a node sits in its unit: the loops whose body holds it and the handlers around it."""

    loops: tuple[cst.For | cst.While, ...] = ()
    handlers: tuple[cst.ExceptHandler | cst.ExceptStarHandler, ...] = ()


NOWHERE = Place()
_LOOP_KINDS = frozenset([cst.For, cst.While])
_HANDLER_KINDS = frozenset([cst.ExceptHandler, cst.ExceptStarHandler])


def child_place(node: cst.CSTNode, child: cst.CSTNode, place: Place) -> Place:
    """The place of a child of `node` (at `place`): inside a loop's or handler's body, one more."""
    kind = type(node)
    if kind in _LOOP_KINDS and child is getattr(node, "body", None):
        return Place((*place.loops, cast("cst.For | cst.While", node)), place.handlers)
    if kind in _HANDLER_KINDS and child is getattr(node, "body", None):
        return Place(place.loops, (*place.handlers, cast("cst.ExceptHandler | cst.ExceptStarHandler", node)))
    return place


Node = TypeVar("Node", bound=cst.CSTNode)


# The node classes that `placed` is asked for, which the index keeps: not names, attributes,
# arguments and literals, most of a tree's nodes.
PLACED_KINDS = frozenset(
    [
        *(cst.Call, cst.Subscript, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Yield),
        *(cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return, cst.Raise),
        *(cst.If, cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef),
    ]
)


def placed(unit: Unit, kind: type[Node]) -> list[tuple[Node, Place]]:
    """The nodes of class `kind` (one of `PLACED_KINDS`) in the unit's own code, in source order,
    with their places; nested scopes are included, not entered. The index's walk keeps them
    for functions and the module; a lambda's are walked when first asked."""
    assert kind in PLACED_KINDS, kind
    if unit.nodes_by_kind is None:
        unit.nodes_by_kind = _placed_by_kind(unit)
    return cast("list[tuple[Node, Place]]", unit.nodes_by_kind.get(kind, []))


def _placed_by_kind(unit: Unit) -> dict[type, list[Any]]:
    grouped: dict[type, list[Any]] = {}
    body = unit.node.body if isinstance(unit.node, (cst.FunctionDef, cst.Lambda)) else unit.node
    stack = [(child, NOWHERE) for child in reversed(children(body))]
    while stack:
        current, place = stack.pop()
        if type(current) in PLACED_KINDS:
            grouped.setdefault(type(current), []).append((current, place))
        if type(current) not in SCOPES and type(current) not in LEAVES:
            stack += [(child, child_place(current, child, place)) for child in reversed(children(current))]
    return grouped


@dataclass(eq=False)
class ClassInfo:
    name: str
    node: cst.ClassDef
    base_names: list[str | None]  # qualified (or local) names of the bases; None when not a name
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    setters: dict[str, cst.FunctionDef] = field(default_factory=dict)  # `@name.setter`: `obj.name = v` runs it
    forward_names: set[str] = field(default_factory=lambda: {"forward"})
    # self.x = value, anywhere in the class, with the unit the assignment is in
    attribute_values: dict[str, list[tuple[cst.BaseExpression, Unit]]] = field(default_factory=dict)
    # self.x[k] = value, and under OWN_ITEMS self[k] = value (a subclass of dict)
    item_values: dict[str, list[tuple[cst.BaseExpression, Unit]]] = field(default_factory=dict)
    managed: set[str] = field(default_factory=set)  # containers reset, cleared or popped outside __init__
    managed_in: dict[str, list[Unit]] = field(default_factory=dict)  # where each of those is reset
    module_attributes: set[str] = field(default_factory=set)  # self.x used as a module somewhere
    frozen_attributes: set[str] = field(default_factory=set)  # self.x.requires_grad_(False) somewhere
    is_module: bool = False
    is_autograd_function: bool = False
    is_record: bool = False  # a dataclass or NamedTuple: an instance holds what it is built from
    # `history = []` in the class body (annotated only in a plain class): one container every instance shares
    class_containers: dict[str, cst.BaseExpression] = field(default_factory=dict)


@dataclass(eq=False)
class Unit:
    """A function, a lambda, or the module body: the scope the flow pass walks."""

    node: Function
    parent: Unit | None
    cls: ClassInfo | None = None  # the class, for methods and for functions nested in them
    self_name: str | None = None  # the name bound to the instance, in methods and their closures
    is_method: bool = False
    roles: dict[Role, str] = field(default_factory=dict)  # role -> why, in words
    skip_params: int = 0  # leading hook parameters bound by functools.partial
    # parameters functools.partial binds by keyword, with the values it binds (`device=torch.device("cuda")`)
    skip_keywords: Mapping[str, cst.BaseExpression] = field(default_factory=dict)
    # Registered only as a backward or tensor hook: it is given gradients, which autograd computes
    # without a graph (unless `create_graph=True`).
    given_gradients: bool = False
    given_parameter: bool = False  # a `register_post_accumulate_grad_hook` hook: handed the parameter
    defs: dict[str, Unit] = field(default_factory=dict)  # nested functions by name
    bindings: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    augmented: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # `x += value`
    module_evidence: set[str] = field(default_factory=set)  # names used as modules
    # Names that get `append`/`extend`/`insert` here or in nested code: lists, not tensors.
    list_evidence: set[str] = field(default_factory=set)
    frozen: set[str] = field(default_factory=set)  # `vgg.requires_grad_(False)`: modules (names, `self.x`) frozen here
    # names that `.backward()` is called on, with those calls
    graph_evidence: dict[str, list[cst.Call]] = field(default_factory=dict)
    graph_holders: set[str] = field(default_factory=set)  # evidence as holders: `out` of `out["loss"].backward()`
    backpropagated: list[cst.BaseExpression] = field(default_factory=list)  # what backward calls take
    # Names whose value reaches a backward call, through the unit's assignments.
    backpropagated_names: set[str] = field(default_factory=set)
    loss_calls: list[cst.Call] = field(default_factory=list)  # criterion(out, y), F.cross_entropy(...)
    managed_globals: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)  # names that live in an enclosing function
    loaders: list[cst.Call] = field(default_factory=list)  # the DataLoader calls that run this in workers
    # Worker code that no loader of this file runs: what another module's loader would be given
    # to run it (the dataset class, the collate function; `Project.loaders_elsewhere`).
    run_elsewhere_as: str | None = None
    # For a method that runs as often as its callers (see `spread_repeating_roles`): where it is called.
    call_sites: list[tuple[cst.Call, Unit]] = field(default_factory=list)
    # A function that a loop over batches calls by name (see `syntax.assign_loop_step_roles`).
    called_per_batch: bool = False
    # For a function a loop over batches calls: parameters given a container that outlives the loop,
    # with the caller and its name for it (`train_step(..., stats)` after `stats = {}`).
    given_containers: dict[str, tuple[Unit, str]] = field(default_factory=dict)
    # Parameters bound once, where a hook is registered (`partial(save, self.acts)` binds `save`'s,
    # `make_hook(self.acts)` its factory's): they live as long as the hook. The registering unit
    # and what it binds.
    bound_containers: dict[str, tuple[Unit, cst.BaseExpression]] = field(default_factory=dict)
    removes_hooks: bool = False  # calls `handle.remove()`: the hooks it registers do not outlive it
    nodes_by_kind: dict[type, list[Any]] | None = field(default=None, repr=False)  # see `placed`
    # What the unit's own code holds (not nested functions'): the flow pass skips units whose
    # walk cannot give any rule something to report.
    has_loop: bool = False  # a `for` or `while` statement
    has_comprehension: bool = False
    has_try: bool = False
    has_nested: bool = False  # a lambda, a nested def or a class defined in the function
    sets_attributes: bool = False  # `self.x = ...`: its final names give the attribute's value
    fills_attributes: bool = False  # `self.xs.append(...)`: what it keeps there outlives the call
    # `def collect(x, bucket=[])`: parameters whose default is a container made once, at `def` time
    mutable_defaults: dict[str, cst.BaseExpression] = field(default_factory=dict)

    @property
    def name(self) -> str:
        node = self.node
        if type(node) is cst.FunctionDef:
            return node.name.value
        return "<lambda>" if type(node) is cst.Lambda else "<module>"

    @property
    def params(self) -> list[cst.Param]:
        """Every parameter of the function or lambda; none for the module body."""
        node = self.node
        return all_params(node.params) if isinstance(node, (cst.FunctionDef, cst.Lambda)) else []

    @cached_property
    def annotations(self) -> dict[str, set[str]]:
        """Each parameter's `annotation_words`, read once: a unit is walked several times (its
        summaries, its callers' reads of its names), and each walk binds every parameter."""
        return {param.name.value: annotation_words(param) for param in self.params}

    @property
    def argument_params(self) -> list[cst.Param]:
        """The parameters that a call's arguments bind, in order: a method's without its `self`
        or `cls` (a static method has none to skip)."""
        params = self.params
        return params[1:] if self.is_method and self.self_name is not None else params

    def method_unit(self) -> Unit | None:
        """The method this unit is, or is nested in."""
        unit: Unit | None = self
        while unit is not None and not unit.is_method:
            unit = unit.parent
        return unit

    def worker_unit(self) -> Unit | None:
        """The unit that runs in DataLoader workers: this one, or a function it is nested in."""
        unit: Unit | None = self
        while unit is not None and Role.WORKER not in unit.roles:
            unit = unit.parent
        return unit

    def lookup_def(self, name: str) -> Unit | None:
        unit: Unit | None = self
        while unit is not None:
            if name in unit.defs:
                return unit.defs[name]
            unit = unit.parent
        return None

    def lookup_bindings(self, name: str) -> list[cst.BaseExpression]:
        unit: Unit | None = self
        while unit is not None:
            if name in unit.bindings:
                return unit.bindings[name]
            unit = unit.parent
        return []


def lineage(classes: dict[str, ClassInfo], cls: ClassInfo) -> list[ClassInfo]:
    """The class and its bases defined in the same file, nearest first."""
    chain = [cls]
    for info in chain:
        for base in info.base_names:
            local = classes.get(base or "")
            if local is not None and local not in chain:
                chain.append(local)
    return chain


def heirs(classes: dict[str, ClassInfo], cls: ClassInfo) -> list[ClassInfo]:
    """The classes of the same file that inherit from `cls` (a mixin's users), and theirs."""
    return [other for other in classes.values() if other is not cls and cls in lineage(classes, other)]


def attribute_family(classes: dict[str, ClassInfo], cls: ClassInfo, attribute: str) -> list[ClassInfo]:
    """The classes whose assignments say what `self.<attribute>` is in a method of `cls`: the class
    and its bases, or, when none of them assigns it (a mixin's `self.cache`), the classes using it
    and what they inherit (a sibling mixin's)."""
    family = lineage(classes, cls)
    if any(not _placeholder(value) for c in family for value, _ in c.attribute_values.get(attribute, [])):
        return family
    # (a mixin that only declares it, `self.batch_loss = None`, reads what a sibling sets)
    users = [c for heir in heirs(classes, cls) for c in lineage(classes, heir) if c not in family]
    declared = family if any(attribute in c.attribute_values for c in family) else []
    return list({id(c): c for c in [*declared, *users]}.values())


def _placeholder(value: cst.BaseExpression) -> bool:
    """`None`: an attribute declared, to be set later."""
    return type(value) is cst.Name and value.value == "None"


@dataclass(frozen=True)
class LoaderCall:
    """A DataLoader(...) call, with whether it starts worker processes."""

    node: cst.Call
    unit: Unit
    has_workers: bool


@dataclass(eq=False)
class ModuleIndex:
    imports: Imports
    module_unit: Unit
    units: list[Unit]  # parents before children
    classes: dict[str, ClassInfo]
    method_units: dict[int, Unit]  # id(FunctionDef) -> unit
    lambda_parents: dict[int, Unit]
    hook_calls: list[tuple[cst.Call, Unit, Role]]
    loader_calls: list[LoaderCall]
    lambda_units: dict[int, Unit] = field(default_factory=dict)
    # `layer.outputs = []`: attributes the module sets on objects other than `self`, by name
    foreign_attributes: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    # the same writes with the object written and the unit that writes: `self.state.loss = loss`
    foreign_writes: dict[str, list[tuple[cst.BaseExpression, cst.BaseExpression, Unit]]] = field(default_factory=dict)
    # `del self.child.feats[:]`, `layer.outputs.clear()`: attributes emptied through another object
    foreign_managed: set[str] = field(default_factory=set)
    # `torch.cat(self.preds)`: containers whose items the code concatenates as tensors, by name
    concatenated: set[str] = field(default_factory=set)
    # `Name(...)` calls by the called name, with the unit whose own code makes them
    named_calls: dict[str, list[tuple[cst.Call, Unit]]] = field(default_factory=dict)
    # `ProcessPoolExecutor(initializer=_worker_init)`: functions a process pool runs, not a DataLoader
    pool_initializers: set[str] = field(default_factory=set)
    # `_CURRENT_STORAGE_STACK.append(self)` in `EventStorage.__enter__`: a list by name (a global
    # where the name is one), and the classes whose methods put their own object in it
    instances_put_in: dict[str, set[str]] = field(default_factory=dict)
    # `parser.add_argument("--device", default="cuda")`: each option's default, by its name in the
    # parsed namespace (`args.device`)
    option_defaults: dict[str, cst.BaseExpression] = field(default_factory=dict)
    # callee name -> for each of its calls, whether it runs under `no_grad`, and the unit making it
    # (syntax.calls_under_no_grad)
    calls_under_no_grad: dict[str, list[tuple[bool, Unit]]] | None = None
    # the same calls, each with its own mode only (in a `no_grad` block or a decorated function)
    calls_in_own_mode: dict[str, list[tuple[bool, Unit]]] | None = None
    # unit id -> whether its code runs with gradients on (`flow._Walker`): every walk of a unit
    # (its own, its summary, its names at the end) asks, and the answer is the module's to give
    grad_enabled: dict[int, bool] = field(default_factory=dict)
    # found when first asked (`syntax.parts_run_without_grad`): plain names by their uses, and
    # attributes read off objects other than a method's `self`
    name_uses: dict[str, int] | None = None
    foreign_reads: set[str] | None = None
    names_no_grad: bool = False  # the module calls or decorates with `no_grad`/`inference_mode` at all
    registers_hooks: bool = False  # the module calls a hook registration at all
    # the module turns gradients on somewhere (`requires_grad_()`, `p.requires_grad = True`): a
    # network frozen as it is built may be unfrozen later
    turns_gradients_on: bool = False
    # (id(class), method name) -> the subclasses' methods that override it (subclass_overrides)
    overriding: dict[tuple[int, str], list[Unit]] = field(default_factory=dict)
    # ignite: `Engine(update)` calls, and for each handler of an iteration event (by id of its
    # unit), the calls of the engines it may be attached to (`engine.state.output` is what their
    # process functions return)
    engines: list[tuple[cst.Call, Unit]] = field(default_factory=list)
    handler_engines: dict[int, list[tuple[cst.Call, Unit]]] = field(default_factory=dict)

    def unit_for_lambda(self, node: cst.Lambda) -> Unit:
        unit = self.lambda_units.get(id(node))
        if unit is None:
            parent = self.lambda_parents[id(node)]
            unit = Unit(node, parent, cls=parent.cls, self_name=parent.self_name)
            self.lambda_units[id(node)] = unit
            self.units.append(unit)
        return unit

    def release(self) -> None:
        """Break the reference cycles that hold the tree (a unit and its parent, a method and its
        class, which lists the units that set its attributes): once the facts are dropped,
        reference counting frees the tree at once, without the cyclic garbage collector."""
        for unit in self.units:
            unit.parent = None
            unit.cls = None
            unit.defs.clear()
        self.named_calls.clear()
        self.calls_under_no_grad = self.calls_in_own_mode = None


class _Indexer:
    """One walk over the module, pyflakes-style: a handler per node type, `leave_` on exit."""

    def __init__(self, module: cst.Module, *, keep_places: bool) -> None:
        self.keep_places = keep_places
        self.imports = Imports()
        self.module_unit = Unit(module, None)
        self.units: list[Unit] = [self.module_unit]
        self.unit_stack: list[Unit] = [self.module_unit]
        self.class_stack: list[ClassInfo | None] = [None]
        self.classes: dict[str, ClassInfo] = {}
        self.method_units: dict[int, Unit] = {}
        self.lambda_parents: dict[int, Unit] = {}
        self.hook_calls: list[tuple[cst.Call, Unit, Role]] = []
        self.event_handlers: list[tuple[cst.Call, Unit]] = []  # ignite's `engine.add_event_handler(event, h)`
        self.loop_items: list[tuple[str | None, cst.BaseExpression | None]] = []  # own_container_items of each loop in
        self.engines: list[tuple[cst.Call, Unit]] = []  # ignite's `Engine(update)`
        self.names_no_grad = False
        self.registers_hooks = False
        self.turns_gradients_on = False
        self.loader_calls: list[cst.Call] = []
        self.loader_units: list[Unit] = []
        self.foreign_attributes: dict[str, list[cst.BaseExpression]] = {}  # `module.outputs = []`
        self.foreign_writes: dict[str, list[tuple[cst.BaseExpression, cst.BaseExpression, Unit]]] = {}
        self.foreign_managed: set[str] = set()
        self.concatenated: set[str] = set()
        self.first_fills: set[int] = set()  # `if k not in d: d[k] = []`: creates a missing entry, empties none
        self.named_calls: dict[str, list[tuple[cst.Call, Unit]]] = {}
        self.pool_initializers: set[str] = set()
        self.instances_put_in: dict[str, set[str]] = {}
        self.option_defaults: dict[str, cst.BaseExpression] = {}
        self.lambda_depth = 0  # calls in a lambda are not its unit's own code
        self.lazy_values: set[int] = set()  # `self.x = {}` under `if not hasattr(self, "x")`: creation

    @property
    def unit(self) -> Unit:
        return self.unit_stack[-1]

    def run(self, module: cst.Module) -> None:
        """Visit every node; keep each function's and the module's own nodes, by class, with their
        places (`placed`: several rules ask for them)."""
        # (node, its leave_ when leaving, the unit whose own code it is or None, its place there)
        stack: list[tuple[cst.CSTNode, _Handler | None, Unit | None, Place]] = [(module, None, None, NOWHERE)]
        if self.keep_places:
            self.module_unit.nodes_by_kind = {}
        module_owner = self.module_unit if self.keep_places else None
        while stack:
            node, leaving, owner, place = stack.pop()
            if leaving is not None:
                leaving(self, node)
                continue
            kind = type(node)
            if kind in LEAVES:  # most nodes: names and literals, with no handler and nothing below
                continue
            visit, leave = _HANDLERS.get(kind) or _handlers(kind)
            if visit is not None:
                visit(self, node)
            if owner is not None and kind in PLACED_KINDS:
                owner.nodes_by_kind.setdefault(kind, []).append((node, place))  # type: ignore[union-attr]
            if leave is not None:
                stack.append((node, leave, None, place))
            below = children(node)
            below.reverse()
            if kind is cst.Module:
                stack += [(child, None, module_owner, NOWHERE) for child in below]
            elif kind is cst.FunctionDef and self.keep_places:
                body, unit = cast(cst.FunctionDef, node).body, self.unit  # visit_FunctionDef made its unit
                unit.nodes_by_kind = {}
                stack += [(child, None, unit if child is body else None, NOWHERE) for child in below]
            elif kind in SCOPES or owner is None:  # a class body or a lambda: no unit's own code
                stack += [(child, None, None, NOWHERE) for child in below if type(child) not in LEAVES]
            elif kind in _LOOP_KINDS or kind in _HANDLER_KINDS:
                stack += [(child, None, owner, child_place(node, child, place)) for child in below]
            else:  # the place of every other node's children is its own (leaves: nothing to visit)
                stack += [(child, None, owner, place) for child in below if type(child) not in LEAVES]

    def _option_default(self, call: cst.Call) -> None:
        """`add_argument("--device", default="cuda")`, `add_argument("-d", "--data-dir", dest="root")`."""
        default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
        if default is None:
            return
        dest = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dest"), None)
        flags = [string_value(a.value) for a in call.args if a.keyword is None]
        name = string_value(dest) if dest is not None else next((f for f in flags if f and f.startswith("--")), None)
        if name is None and flags and flags[0] and not flags[0].startswith("-"):
            name = flags[0]  # a positional argument
        if name:
            self.option_defaults[name.lstrip("-").replace("-", "_")] = default

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.add(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.add(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.class_stack[-1] is None and self.unit is not self.module_unit:
            self.unit.has_nested = True  # a class made by each call: its methods may capture the call's names
        bases = [_base_name(arg.value, self.imports) for arg in node.bases if arg.keyword is None]
        info = ClassInfo(node.name.value, node, bases)
        decorators = {
            dotted_name(d.decorator.func if type(d.decorator) is cst.Call else d.decorator) for d in node.decorators
        }
        info.is_record = bool(decorators & _RECORD_DECORATORS) or any(b and b.endswith("NamedTuple") for b in bases)
        self.classes[info.name] = info
        self.class_stack.append(info)
        # Class-body aliases: `forward = _forward_impl`; containers shared by every instance.
        fields_shared = _shares_annotated_fields(info, node, decorators)
        for statement in node.body.body:
            if type(statement) is cst.SimpleStatementLine:
                for small in statement.body:
                    if not isinstance(small, cst.AnnAssign | cst.Assign) or small.value is None:
                        continue
                    self._record_field(info, small)
                    if isinstance(small, cst.AnnAssign) and not (fields_shared or _is_class_var(small.annotation)):
                        continue  # an annotated field is a dataclass's or pydantic's: copied per instance
                    assigned = [small.target] if isinstance(small, cst.AnnAssign) else [t.target for t in small.targets]
                    targets = {t.value for t in assigned if type(t) is cst.Name}
                    if type(small.value) is cst.Name and "forward" in targets:
                        info.forward_names.add(small.value.value)
                    if makes_container(small.value):
                        info.class_containers.update(dict.fromkeys(targets, small.value))

    def _record_field(self, info: ClassInfo, statement: cst.AnnAssign | cst.Assign) -> None:
        """`outputs: list = field(default_factory=list)`: a container each instance gets, as if its
        generated `__init__` assigned `self.outputs`."""
        value = statement.value
        if not (isinstance(value, cst.Call) and field_factory(value) is not None):
            return
        targets = [statement.target] if isinstance(statement, cst.AnnAssign) else [t.target for t in statement.targets]
        init = Unit(_GENERATED_INIT, self.unit, cls=info, self_name="self", is_method=True)
        for target in targets:
            if type(target) is cst.Name:
                info.attribute_values.setdefault(target.value, []).append((value, init))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if any((dotted_name(d.decorator) or "").rsplit(".", 1)[-1] in NO_GRAD_NAMES for d in node.decorators):
            self.names_no_grad = True  # `@torch.no_grad` without a call
        cls = self.class_stack[-1]
        parent = self.unit
        if cls is None:
            parent.has_nested = True
        if cls is not None:  # a method
            params = node.params.params
            self_name = params[0].name.value if params and not _is_static(node) else None
            unit = Unit(node, parent, cls=cls, self_name=self_name, is_method=True)
            cls.methods.setdefault(node.name.value, node)  # (a property's getter, not its setter)
            if any(dotted_name(d.decorator) == f"{node.name.value}.setter" for d in node.decorators):
                cls.setters[node.name.value] = node
            self.method_units[id(node)] = unit
        else:
            unit = Unit(node, parent, cls=parent.cls, self_name=parent.self_name)
            parent.defs[node.name.value] = unit
            if any(p.name.value == parent.self_name for p in all_params(node.params)):
                unit.self_name = None
        unit.mutable_defaults = {
            p.name.value: p.default
            for p in all_params(node.params)
            if p.default is not None and makes_container(p.default)
        }
        self.units.append(unit)
        self.unit_stack.append(unit)
        self.class_stack.append(None)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.unit_stack.pop()
        self.class_stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambda_parents[id(node)] = self.unit
        self.unit.has_nested = True
        self.lambda_depth += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.lambda_depth -= 1

    def visit_While(self, node: cst.While) -> None:
        self.unit.has_loop = True

    def visit_Try(self, node: cst.Try) -> None:
        self.unit.has_try = True

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self.unit.has_try = True

    def visit_Global(self, node: cst.Global) -> None:
        self.unit.declared_global.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.unit.declared_nonlocal.update(n.name.value for n in node.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)
            if (
                type(target.target) is cst.Attribute
                and target.target.attr.value == "requires_grad"
                and literal_bool(node.value) is not False
            ):
                self.turns_gradients_on = True  # `p.requires_grad = True`
            method = self.unit.method_unit()
            in_init = method is not None and method.name == "__init__"
            slot = target.target
            first_fill = id(node) in self.first_fills
            if type(slot) is cst.Subscript and _empty_container(node.value, slot) and not (in_init or first_fill):
                self._manage(slot.value)  # `self.outputs[key] = []` empties one of its lists

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        created = _created_lazily(test, self.unit.self_name)
        if created is not None and type(node.body) is cst.IndentedBlock:
            # `if not hasattr(self, "_registry"): self._registry = {}`: made once, never emptied
            for statement in node.body.body:
                for small in statement.body if type(statement) is cst.SimpleStatementLine else ():
                    if type(small) is cst.Assign and any(
                        self_attribute(self.unit, t.target) == created for t in small.targets
                    ):
                        self.lazy_values.add(id(small.value))
        if not (
            type(test) is cst.Comparison
            and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) is cst.NotIn
            and type(node.body) is cst.IndentedBlock
        ):
            return
        container = test.comparisons[0].comparator
        for statement in node.body.body:
            for small in statement.body if type(statement) is cst.SimpleStatementLine else ():
                if type(small) is cst.Assign and all(
                    type(t.target) is cst.Subscript and same_code(t.target.value, container) for t in small.targets
                ):
                    self.first_fills.add(id(small))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        # `with EventStorage(start) as self.storage:` keeps on the object what the context manager's
        # `__enter__` gives: nearly always the object made (`return self`).
        target: cst.BaseExpression | None = node.asname.name if node.asname is not None else None
        if type(target) is cst.Attribute and type(node.item) is cst.Call:
            self._bind(target, node.item)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, None)  # a comprehension's variable is local, never a global
        self.unit.has_comprehension = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.target) is cst.Name:  # `loss += subloss`: subloss flows into loss
            self.unit.augmented.setdefault(node.target.value, []).append(node.value)
        elif self_attribute(self.unit, outer_container(node.target)) is not None:
            self.unit.fills_attributes = True  # `self.xs += [x]`, `self.xs[key] += [x]`

    def visit_For(self, node: cst.For) -> None:
        self.unit.has_loop = True
        self._bind(node.target, None)
        self.loop_items.append(own_container_items(node, self.unit))
        for emptied in emptied_each(node):
            self._manage(emptied)

    def leave_For(self, node: cst.For) -> None:
        self.loop_items.pop()

    def visit_Del(self, node: cst.Del) -> None:
        target = node.target
        if type(target) is cst.Subscript:
            self._manage(target.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            # `a, b = [], []` binds pairwise; other unpacking binds values we do not know.
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else []
            pairwise = len(values) == len(target.elements)
            for position, element in enumerate(target.elements):
                self._bind(element.value, values[position].value if pairwise else None)
            return
        if type(target) is cst.Name:
            name = target.value
            rebinding = name in self.unit.bindings
            bound = self.unit.bindings.setdefault(name, [])  # bound here, even when unpacked from a call
            if value is not None:
                bound.append(value)
            global_scope = name in self.unit.declared_global or self.unit is self.module_unit
            if global_scope and resets_container(value, target) and (rebinding or self.unit is not self.module_unit):
                self.module_unit.managed_globals.add(name)  # a global emptied again after its definition
            return
        if type(target) is cst.Subscript and value is not None and self.unit.cls is not None:
            held = self_attribute(self.unit, target.value)
            if held is None and type(target.value) is cst.Name and target.value.value == self.unit.self_name:
                held = OWN_ITEMS  # `self[key] = AverageMeter()` in a dict's subclass
            if held is not None:  # `self.meters[name] = SmoothedValue()`: what the container holds
                self.unit.cls.item_values.setdefault(held, []).append((value, self.unit))
            return
        attribute = self_attribute(self.unit, target)
        if type(target) is cst.Attribute and value is not None and attribute is None:
            self.foreign_attributes.setdefault(target.attr.value, []).append(value)
            self.foreign_writes.setdefault(target.attr.value, []).append((target.value, value, self.unit))
        if attribute is not None and value is not None:
            cls = self.unit.cls
            assert cls is not None
            cls.attribute_values.setdefault(attribute, []).append((value, self.unit))
            self.unit.sets_attributes = True
            method = self.unit.method_unit()
            made_once = id(value) in self.lazy_values
            if method is not None and method.name != "__init__" and resets_container(value, target) and not made_once:
                cls.managed.add(attribute)
                cls.managed_in.setdefault(attribute, []).append(method)

    def _manage(self, container: cst.BaseExpression) -> None:
        outer = outer_container(container)
        itself = type(outer) is cst.Name and outer.value == self.unit.self_name and self.unit.cls is not None
        attribute = OWN_ITEMS if itself else self_attribute(self.unit, outer)  # `self.pending[name].clear()` too
        if attribute is not None and self.unit.cls is not None:
            self.unit.cls.managed.add(attribute)
            self.unit.cls.managed_in.setdefault(attribute, []).append(self.unit.method_unit() or self.unit)
        elif type(container) is cst.Attribute:
            self.foreign_managed.add(container.attr.value)  # a parent empties its child's list
        elif type(container) is cst.Name:
            held = next((held for name, held in reversed(self.loop_items) if name == container.value), None)
            if held is not None:  # `for values in self.curves.values(): values.clear()` empties `self.curves`
                self._manage(held)
                return
            self.module_unit.managed_globals.add(container.value)
            self.unit.managed_globals.add(container.value)

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Name and self.class_stack[-1] is None and not self.lambda_depth:
            self.named_calls.setdefault(node.func.value, []).append((node, self.unit))  # in the unit's own code
        initializer = argument(node, "initializer")
        if type(initializer) is cst.Name:
            self.pool_initializers.add(initializer.value)
        name = callee_name(node)
        recv = receiver(node)
        if name is None:
            return
        if name in NO_GRAD_NAMES:
            self.names_no_grad = True
        if name in MODULE_HOOK_REGISTRATIONS or name in TENSOR_HOOK_REGISTRATIONS:
            self.registers_hooks = True  # a handle may be kept: without one, no value is looked at for it
        if name == "requires_grad_" and (not node.args or literal_bool(node.args[0].value) is not False):
            self.turns_gradients_on = True
        if name == "add_event_handler" and recv is not None and len(node.args) >= 2:
            self.event_handlers.append((node, self.unit))
        elif name in _IGNITE_ENGINES and (self.imports.qualify(node.func) or "").startswith("ignite.") and node.args:
            self.engines.append((node, self.unit))
        if recv is not None:
            if name == "remove" and not node.args:
                self.unit.removes_hooks = True  # RemovableHandle.remove(); list.remove takes an item
            elif name in CONTAINER_MANAGEMENT:
                self._manage(recv)
            if name in MODULE_ONLY_METHODS:
                self._module_evidence(recv)
            if name in _LIST_ONLY_METHODS and self_attribute(self.unit, outer_container(recv)) is not None:
                self.unit.fills_attributes = True
            if name in _LIST_ONLY_METHODS and type(recv) is cst.Name:
                unit: Unit | None = self.unit
                while unit is not None:  # `lambda x: grads.append(x)` tells its parent `grads` is a list
                    unit.list_evidence.add(recv.value)
                    unit = unit.parent
            first = node.args[0].value if node.args else None
            if name == "requires_grad_" and type(first) is cst.Name and first.value == "False":
                self._frozen(recv)
            if name == "add_argument":
                self._option_default(node)
            itself = type(first) is cst.Name and first.value == self.unit.self_name
            if name == "append" and type(recv) is cst.Name and itself and self.unit.cls is not None:
                self.instances_put_in.setdefault(recv.value, set()).add(self.unit.cls.name)  # `_STACK.append(self)`
            if name == "register_buffer" and len(node.args) > 1:
                self._register_buffer(recv, node.args[0].value, node.args[1].value)
            if name == "__init__" and self.unit.name == "__init__" and self.unit.cls is not None:
                self._item_factory(node, recv, self.unit.cls)
            if name in TENSOR_HOOK_REGISTRATIONS or name in MODULE_HOOK_REGISTRATIONS:
                role = Role.TENSOR_HOOK if name in TENSOR_HOOK_REGISTRATIONS else Role.MODULE_HOOK
                self.hook_calls.append((node, self.unit, role))
        elif name in MODULE_HOOK_REGISTRATIONS:
            self.hook_calls.append((node, self.unit, Role.MODULE_HOOK))
        qualified = self.imports.qualify(node.func) or ""
        functional = qualified.startswith("torch.nn.functional.")
        if is_loss_name(name) or (functional and ("loss" in name or "entropy" in name or name == "kl_div")):
            self.unit.loss_calls.append(node)
        if name in ("backward", "manual_backward"):
            self._backward(node, recv)
        elif name is not None and _backpropagates_a_loss(name, node):
            self._backward(node, None)  # `self.model_backward_and_update(loss)`: a trainer's helper
        elif name == "grad" and qualified.startswith("torch.autograd"):
            self._backward(node, None)
        # `torch.cat(store["emb"])` joins what `store` holds
        if (
            qualified in _TORCH_CONCATENATIONS
            and node.args
            and (joined := dotted_name(outer_container(node.args[0].value)))
        ):
            self.concatenated.add(joined)
        if name in LOADER_CLASSES or qualified.rsplit(".", 1)[-1] in LOADER_CLASSES:
            self.loader_calls.append(node)
            self.loader_units.append(self.unit)

    def _item_factory(self, call: cst.Call, recv: cst.BaseExpression, cls: ClassInfo) -> None:
        """`super().__init__(partial(AverageMeter, window_size=20))` in a subclass of `defaultdict`:
        each key gets a new item from the factory, as `self[key] = AverageMeter()` would put there."""
        if not any((base or "").rsplit(".", 1)[-1] == "defaultdict" for base in cls.base_names):
            return
        args = call.args[1:] if type(recv) is cst.Name and recv.value == "defaultdict" else call.args
        factory = args[0].value if args and not args[0].keyword and not args[0].star else None
        if type(factory) is cst.Name and len(bound := self.unit.bindings.get(factory.value, [])) == 1:
            factory = bound[0]  # `factory = partial(AverageMeter, ...)` just before
        if type(factory) is cst.Call and is_partial(self.imports, factory) and factory.args:
            factory = factory.args[0].value  # `partial(AverageMeter, window_size=20)`
        made = factory.body if type(factory) is cst.Lambda else factory  # `lambda: AverageMeter(20)`
        if made is not None:
            cls.item_values.setdefault(OWN_ITEMS, []).append((made, self.unit))

    def _register_buffer(self, recv: cst.BaseExpression, name: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`self.register_buffer("running_mean", torch.zeros(n))`: an assignment to `self.running_mean`."""
        attribute = string_value(name)
        cls = self.unit.cls
        if attribute and cls is not None and type(recv) is cst.Name and recv.value == self.unit.self_name:
            cls.attribute_values.setdefault(attribute, []).append((value, self.unit))

    def _frozen(self, recv: cst.BaseExpression) -> None:
        """`sampler.eval().requires_grad_(False)`: the module at the root of the chain is frozen."""
        while type(recv) is cst.Call and type(recv.func) is cst.Attribute:
            recv = recv.func.value
        self._module_evidence(recv)
        attribute = self_attribute(self.unit, recv)
        if attribute is not None and self.unit.cls is not None:
            self.unit.cls.frozen_attributes.add(attribute)
        elif (dotted := dotted_name(recv)) is not None:
            self.unit.frozen.add(dotted)

    def _module_evidence(self, recv: cst.BaseExpression) -> None:
        attribute = self_attribute(self.unit, recv)
        if attribute is not None and self.unit.cls is not None:
            self.unit.cls.module_attributes.add(attribute)
            return
        dotted = dotted_name(recv)
        if dotted is not None:
            self.unit.module_evidence.add(dotted)

    def _backward(self, call: cst.Call, recv: cst.BaseExpression | None) -> None:
        """Record what a backward call reaches: `loss.backward()`, `accelerator.backward(loss)`."""
        reached: list[cst.BaseExpression] = [arg.value for arg in call.args[:1] if arg.keyword is None]
        if recv is not None and not reached:
            reached.append(recv)
        elif recv is not None and type(recv) is cst.Call:
            reached.append(recv)  # scaler.scale(loss).backward()
        for expr in reached:
            self.unit.backpropagated.append(expr)
            holder = _projected_name(expr)  # `out["loss"].backward()`: `out` holds the graph
            if holder is not None and holder != self.unit.self_name:
                self.unit.graph_evidence.setdefault(holder, []).append(call)
                self.unit.graph_holders.add(holder)
            inner = expr
            # scaler.scale(loss) and (loss / n): the graph evidence is for the name inside.
            while type(inner) is cst.Call and inner.args:
                inner = inner.args[0].value
            if type(inner) is cst.BinaryOperation:
                inner = inner.left
            if type(inner) is cst.Name:
                self.unit.graph_evidence.setdefault(inner.value, []).append(call)


def held_by_self(unit: Unit, expr: cst.BaseExpression) -> str | None:
    """What holds a container or an item of one on the object: `x` for `self.x` and `self.x[k]`;
    `OWN_ITEMS` for `self[k]`, an item of the object itself (a subclass of dict)."""
    outer = outer_container(expr)
    if outer is not expr and type(outer) is cst.Name and outer.value == unit.self_name and unit.cls is not None:
        return OWN_ITEMS
    return self_attribute(unit, outer)


def self_attribute(unit: Unit, expr: cst.BaseExpression) -> str | None:
    """`x` for `self.x`, where `self` is the instance of the method around `unit`."""
    if (
        type(expr) is cst.Attribute
        and type(expr.value) is cst.Name
        and unit.cls is not None
        and unit.self_name is not None
        and expr.value.value == unit.self_name
    ):
        return expr.attr.value
    return None


_HANDLERS: dict[type, tuple[_Handler | None, _Handler | None]] = {}


def _created_lazily(test: cst.BaseExpression, self_name: str | None) -> str | None:
    """The attribute a test asks whether it exists yet: `not hasattr(self, "x")`, `self.x is
    None`, `getattr(self, "x", None) is None`."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        call = test.expression
        if type(call) is cst.Call and callee_name(call) == "hasattr" and len(call.args) == 2:
            name = call.args[1].value
            return string_value(name) if type(name) is cst.SimpleString else None
        return None
    left = _compared_to_none(test)
    if type(left) is cst.Attribute and type(left.value) is cst.Name and left.value.value == self_name:
        return left.attr.value
    if type(left) is cst.Call and callee_name(left) == "getattr" and len(left.args) >= 2:
        name = left.args[1].value
        return string_value(name) if type(name) is cst.SimpleString else None
    return None


def _handlers(kind: type) -> tuple[_Handler | None, _Handler | None]:
    """`_Indexer`'s `visit_` and `leave_` functions for a node class, looked up once per class
    (unbound: bound methods kept on the indexer would tie it, and the tree, into a cycle)."""
    found = _HANDLERS.get(kind)
    if found is None:
        name = kind.__name__
        found = _HANDLERS[kind] = (getattr(_Indexer, f"visit_{name}", None), getattr(_Indexer, f"leave_{name}", None))
    return found


def build_index(
    module: cst.Module, *, keep_places: bool = True, star_origins: Callable[[str], dict[str, str]] | None = None
) -> ModuleIndex:
    """The module's index; with `keep_places`, each function's own nodes by class, with their
    places (`placed`), which the rules ask of every function (a module read only for the
    summaries of a few functions places those when asked). `star_origins` names what a
    `from module import *` of the project binds from outside it (`Project.star_bindings`)."""
    indexer = _Indexer(module, keep_places=keep_places)
    indexer.run(module)
    if star_origins is not None:  # before the passes below read the imports
        for star in indexer.imports.starred:
            for local, origin in star_origins(star).items():
                indexer.imports.aliases.setdefault(local, origin)
    index = ModuleIndex(
        imports=indexer.imports,
        module_unit=indexer.module_unit,
        units=indexer.units,
        classes=indexer.classes,
        method_units=indexer.method_units,
        lambda_parents=indexer.lambda_parents,
        hook_calls=indexer.hook_calls,
        names_no_grad=indexer.names_no_grad,
        registers_hooks=indexer.registers_hooks,
        turns_gradients_on=indexer.turns_gradients_on,
        loader_calls=[],
        foreign_attributes=indexer.foreign_attributes,
        foreign_writes=indexer.foreign_writes,
        foreign_managed=indexer.foreign_managed,
        concatenated=indexer.concatenated,
        named_calls=indexer.named_calls,
        pool_initializers=indexer.pool_initializers,
        instances_put_in=indexer.instances_put_in,
        option_defaults=indexer.option_defaults,
        engines=indexer.engines,
    )
    for unit in index.units:
        _find_graph_producers(index, unit)
    _classify_classes(index)
    _assign_forward_roles(index)
    _assign_hook_roles(index)
    if indexer.engines or indexer.event_handlers:
        _assign_event_handler_roles(index, indexer.event_handlers)
    _assign_unseen_hook_roles(index)
    in_main_process: set[int] = set()  # units that only loaders without workers run
    for call, unit in zip(indexer.loader_calls, indexer.loader_units, strict=True):
        _assign_worker_roles(index, call, unit, in_main_process)
    _assign_unseen_loader_roles(index, in_main_process)
    _spread_worker_role(index)
    spread_repeating_roles(index)
    return index


def _spread_worker_role(index: ModuleIndex) -> None:
    """Worker code's helpers run in the worker too: `self._load()`, `load(path)`, `self.transform(x)`."""
    todo = [unit for unit in index.units if Role.WORKER in unit.roles]
    while todo:
        caller = todo.pop()
        for _, callee in callees(index, caller):
            if Role.WORKER not in callee.roles:
                callee.roles[Role.WORKER] = f"`{callee.name}`, called from {caller.roles[Role.WORKER]}"
                callee.loaders.extend(caller.loaders)
                callee.run_elsewhere_as = caller.run_elsewhere_as
                todo.append(callee)
            elif callee.run_elsewhere_as != caller.run_elsewhere_as:
                callee.run_elsewhere_as = None  # run for two callers: the loaders of one say nothing of the other


def spread_repeating_roles(index: ModuleIndex, todo: list[Unit] | None = None) -> None:
    """A method that `forward`, a hook or a per-step method calls on `self` runs as often as its
    caller: `self._keep(h)` in forward is forward code (hooks' helpers are, since they are not
    given a hook's arguments). Module functions are followed at their calls instead (summaries).
    From the units in `todo` only, when given (roles given later: a loop's per-batch methods)."""
    spread = {
        Role.FORWARD: Role.FORWARD,
        Role.MODULE_HOOK: Role.FORWARD,
        Role.TENSOR_HOOK: Role.FORWARD,
        Role.STEP: Role.STEP,
    }
    if todo is None:
        todo = [unit for unit in index.units if any(role in unit.roles for role in spread)]
    while todo:
        caller = todo.pop()
        role = next(r for r in spread if r in caller.roles)
        once = run_once_calls(caller)
        own = lineage(index.classes, caller.cls) if caller.cls is not None else []
        for call, callee in [*callees(index, caller), *_methods_handed_over(index, caller)]:
            if id(call) in once:
                continue  # `if self._impl is None: self._impl = self._build()`: once per object
            # A method of `self` (a base class's too: `self.W_()`, or a subclass's override of the
            # method called), or of an object it keeps, whose class the module shows:
            # `self.queue.enqueue(k)` with `self.queue = KeyQueue(...)`.
            mine = callee.cls in own or (callee.cls is not None and caller.cls in lineage(index.classes, callee.cls))
            on_self = callee.is_method and (mine or _called_on_member(call, caller))
            on_self = on_self or callee.parent is caller  # a function the caller defines runs as often
            # every call of it from repeating code; and of a per-step method by its name that forward
            # code calls (`self.bank.update(idx, f)` in a loss's `forward`): given forward's tensors
            by_name_from_forward = spread[role] is Role.FORWARD and callee.roles.keys() == {Role.STEP}
            if callee.call_sites or (on_self and (not callee.roles or by_name_from_forward)):
                callee.call_sites.append((call, caller))
            if on_self and not callee.roles and callee.name != "__init__":
                callee.roles[spread[role]] = f"`{qualified_name(callee)}`, called from {caller.roles[role]}"
                todo.append(callee)


def hand_on_containers(index: ModuleIndex) -> None:
    """The containers a step was handed that it hands on to the helpers repeating code calls
    (`self._keep(metrics, loss)`): the helper's parameters take them, made where the step's were."""
    changed = True
    while changed:
        changed = False
        for callee in index.units:
            params = [p.name.value for p in callee.argument_params]
            for call, caller in callee.call_sites:
                for position, arg in arguments_by_position(call, callee).items():
                    if position >= len(params) or params[position] in callee.given_containers:
                        continue
                    if type(arg) is cst.Name and arg.value in caller.given_containers:
                        callee.given_containers[params[position]] = (caller, arg.value)
                        changed = True


def _methods_handed_over(index: ModuleIndex, caller: Unit) -> Iterator[tuple[cst.Call, Unit]]:
    """Methods of `self` that a call is handed to run (`checkpoint(self._block, x)`,
    `graph.apply_edges(self.edge_message)`): they run then, as often as the caller. Not those
    handed to a registration or a container, which keep them for later."""
    if caller.cls is None or caller.self_name is None:
        return
    for call, _ in placed(caller, cst.Call):
        called = callee_name(call) or ""
        if called.startswith("register") or called in _KEEPING_CALLS:
            continue
        for arg in call.args:
            name = self_attribute(caller, arg.value)
            method = method_of(index, caller.cls, name) if name is not None else None
            if method is not None:
                yield call, method


# Calls that keep a callable for later rather than run it.
_KEEPING_CALLS = frozenset(["append", "appendleft", "add", "extend", "insert", "setdefault", "update", "partial"])


def runs_per_batch(unit: Unit) -> bool:
    """Whether a loop over batches that the code shows calls the function, directly or through
    the methods it calls on `self` (`self._keep(out)` in the per-batch `self._evaluate_one`)."""
    return unit.called_per_batch or called_from(unit, lambda caller: caller.called_per_batch)


def called_from(unit: Unit, test: Callable[[Unit], bool]) -> bool:
    """Whether a caller of the unit, or of its callers (the calls of it from repeating code), passes `test`."""
    seen, todo = {id(unit)}, [caller for _, caller in unit.call_sites]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if test(current):
            return True
        todo.extend(caller for _, caller in current.call_sites)
    return False


def overrides(index: ModuleIndex, method: Unit) -> list[Unit]:
    """The methods of this module's subclasses that override `method`, when it is abstract (only a
    docstring and `raise NotImplementedError`, `pass` or `...`): one of them runs instead."""
    cls, node = method.cls, method.node
    if not method.is_method or cls is None or type(node) is not cst.FunctionDef or not _is_abstract(node):
        return []
    name = node.name.value
    return [
        index.method_units[id(sub.methods[name])]
        for sub in index.classes.values()
        if sub is not cls and name in sub.methods and cls in lineage(index.classes, sub)
    ]


def _is_abstract(node: cst.FunctionDef) -> bool:
    smalls: list[cst.BaseSmallStatement] = []
    if type(node.body) is cst.SimpleStatementSuite:  # `def on_batch_end(self, outputs): ...`
        smalls += node.body.body
    for statement in node.body.body if type(node.body) is cst.IndentedBlock else []:
        if type(statement) is not cst.SimpleStatementLine:
            return False
        smalls += statement.body
    for small in smalls:
        value = small.value if type(small) is cst.Expr else None
        if type(small) is cst.Pass or isinstance(value, cst.Ellipsis | cst.SimpleString | cst.ConcatenatedString):
            continue
        if type(small) is cst.Raise and small.exc is not None:
            raised = small.exc.func if type(small.exc) is cst.Call else small.exc
            if dotted_name(raised) == "NotImplementedError":
                continue
        return False
    return True


# Hooks that frameworks call once, when a run starts: fastai's `before_fit`, Lightning's
# `on_fit_start`/`on_train_start`, a Keras-style or HF callback's `on_train_begin`.
RUN_START_HOOKS = frozenset(["before_fit", "on_fit_start", "on_train_start", "on_train_begin", "on_fit_begin"])


def _resets(index: ModuleIndex, cls: ClassInfo, attribute: str) -> list[Unit]:
    """The methods of the class and its bases that reset, clear or pop `self.<attribute>`."""
    return [unit for c in lineage(index.classes, cls) for unit in c.managed_in.get(attribute, [])]


def reset_only_when_run_starts(index: ModuleIndex, cls: ClassInfo, attribute: str) -> bool:
    """Whether every reset of `self.<attribute>` is in a hook that runs once, when the run starts
    (`before_fit`, `on_train_start`): nothing empties it while the run adds to it."""
    resets = _resets(index, cls, attribute)
    return bool(resets) and attribute not in index.foreign_managed and all(u.name in RUN_START_HOOKS for u in resets)


def reset_only_at_teardown(index: ModuleIndex, cls: ClassInfo, attribute: str) -> bool:
    """Whether every reset of `self.<attribute>` is in a method that removes the hooks `__init__`
    registered (`close()`, `__exit__`): the hooks fill it for the object's whole life, and the reset
    only ends that life."""
    family = lineage(index.classes, cls)
    resets = _resets(index, cls, attribute)
    if not resets or attribute in index.foreign_managed or not all(u.removes_hooks for u in resets):
        return False
    return any(_registers_module_hooks(c.methods["__init__"]) for c in family if "__init__" in c.methods)


def reset_only_where_hooks_registered(index: ModuleIndex, cls: ClassInfo, attribute: str) -> bool:
    """Whether every reset of `self.<attribute>` is in a method that registers module hooks
    (`self.maps[name] = []` beside `register_forward_hook`), and no method of the class removes
    hooks: the reset makes the lists that those hooks then fill for the object's whole life."""
    family = lineage(index.classes, cls)
    resets = _resets(index, cls, attribute)
    if not resets or attribute in index.foreign_managed:
        return False
    if any(index.method_units[id(method)].removes_hooks for c in family for method in c.methods.values()):
        return False
    return all(_made_here(unit, attribute) and _registers_module_hooks(unit.node) for unit in resets)


def _registers_module_hooks(code: cst.CSTNode) -> bool:
    """Whether the code registers a module hook (`layer.register_forward_hook(...)`)."""
    return any(type(node) is cst.Call and callee_name(node) in MODULE_HOOK_REGISTRATIONS for node in walk(code))


def _made_here(unit: Unit, attribute: str) -> bool:
    """Whether the method's own code (not a hook it defines: `del self.outputs[-1]` in a backward
    hook pops what the forward hook pushed) assigns the container or an item of it."""
    return any(
        self_attribute(unit, outer_container(target.target)) == attribute
        for assign, _ in placed(unit, cst.Assign)
        for target in assign.targets
    )


def reset_only_while_built(
    index: ModuleIndex, cls: ClassInfo, attribute: str, *, private: bool = False, uncalled: frozenset[str] = frozenset()
) -> bool:
    """Whether every reset of `self.<attribute>` runs only while the object is built: in methods
    that only `__init__` calls, directly or through each other (`reset_parameters()` calling
    `reset_running_stats()`, or a mixin's `_init_stats()` that a subclass's `__init__` calls).
    Such a reset bounds nothing that `forward` adds later. With `private`, only when those methods,
    and the ones between them and `__init__`, are private (`_init_stats`) or among `uncalled`,
    public ones that no other code calls: a public `reset()` may be called from another module too."""
    resets = _resets(index, cls, attribute)
    if attribute in index.foreign_managed or not resets:
        return False
    callers: dict[int, list[Unit]] = {}
    for c in index.classes.values():  # a subclass's methods too: they call a mixin's on `self`
        for method in c.methods.values():
            caller = index.method_units[id(method)]
            for _, callee in callees(index, caller):
                callers.setdefault(id(callee), []).append(caller)
    built: dict[int, bool] = {}

    def only_at_build(unit: Unit) -> bool:
        if unit.name == "__init__":
            return True
        if private and not unit.name.startswith("_") and unit.name not in uncalled:
            return False  # `reset()`, which `_init_buffers()` serves, may be called from outside
        if id(unit) not in built:
            built[id(unit)] = False  # a cycle of methods proves nothing
            found = callers.get(id(unit), [])
            never_run = not found and unit.name in uncalled  # a public reset that no code calls
            built[id(unit)] = never_run or (bool(found) and all(only_at_build(caller) for caller in found))
        return built[id(unit)]

    return all(only_at_build(unit) for unit in resets)


def run_once_calls(caller: Unit) -> set[int]:
    """Calls under a lazy-initialisation guard (`if self.x is None:` that assigns `self.x`), or
    under a first-step guard (`if curr_iter == 0 or len(self.reals) == 0:` that fills
    `self.reals`): once per object or per run, not once per call."""
    once: set[int] = set()
    for node, _ in placed(caller, cst.If):
        tests = _either(node.test)
        first_step = any(_first_step(test) for test in tests)
        # `len(self.reals) == 0` only beside a first-step test: alone, it may test a queue that
        # each step drains (`self.pending.pop()`), refilled again and again
        guarded = [_lazily_set(test) or (_emptiness_tested(test) if first_step else None) for test in tests]
        once_tests = (
            (name is not None and "." in name) or _first_step(test) for name, test in zip(guarded, tests, strict=True)
        )
        if not all(once_tests):
            continue
        bodies = [node.body, *_own_methods_called(caller, node.body)]  # `self.load_model()` sets it
        filled = {
            dotted_name(t.target) for body in bodies for inner in walk(body) if type(inner) is cst.Assign
            and not _empty_value(inner.value) for t in inner.targets
        }  # fmt: skip
        if all(name is None or name in filled for name in guarded):
            once |= {id(inner) for inner in walk(node.body) if type(inner) is cst.Call}
    return once | _flag_cleared_calls(caller)


def _flag_cleared_calls(caller: Unit) -> set[int]:
    """Calls under an attribute flag that the guarded block clears (`if self._first_iter: ...;
    self._first_iter = False`) and that no method of the class sets again (but `__init__`):
    once per object."""
    once: set[int] = set()
    if caller.cls is None:
        return once
    for node, _ in placed(caller, cst.If):
        flag = dotted_name(node.test) if type(node.test) is cst.Attribute else None
        if (
            flag is None
            or not flag.startswith(f"{caller.self_name}.")
            or not any(literal_bool(value) is False for value in _values_assigned(node.body, flag))
        ):
            continue  # the block does not clear it (the common case: no walk of the other methods)
        methods = [m for m in caller.cls.methods.values() if m.name.value != "__init__"]
        if type(caller.node) is cst.FunctionDef and caller.node not in methods and caller.name != "__init__":
            methods.append(caller.node)  # a redefinition (`@batch.setter`): `methods` keeps the first
        if all(literal_bool(value) is False for m in methods for value in _values_assigned(m, flag)):
            once |= {id(inner) for inner in walk(node.body) if type(inner) is cst.Call}
    return once


def _values_assigned(tree: cst.CSTNode, target: str) -> Iterator[cst.BaseExpression]:
    """The values that `target = value` statements below `tree` assign to the dotted name."""
    for inner in walk(tree):
        if type(inner) is cst.Assign and any(dotted_name(t.target) == target for t in inner.targets):
            yield inner.value


def _empty_value(value: cst.BaseExpression) -> bool:
    """`[]`, `{}`, `None`, `list()`, `dict()`: what leaves a lazily set attribute unset."""
    if isinstance(value, (cst.List, cst.Dict)):
        return not value.elements
    if type(value) is cst.Name:
        return value.value == "None"
    return type(value) is cst.Call and not value.args and dotted_name(value.func) in ("list", "dict")


def _either(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of `a or b or c`; the test itself otherwise."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        return [*_either(test.left), *_either(test.right)]
    return [test]


def _emptiness_tested(test: cst.BaseExpression) -> str | None:
    """`self.x` for the test `len(self.x) == 0`."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    compared = test.comparisons[0]
    zero = type(compared.comparator) is cst.Integer and compared.comparator.value == "0"
    left = test.left
    if not (zero and type(compared.operator) is cst.Equal and type(left) is cst.Call and len(left.args) == 1):
        return None
    return dotted_name(left.args[0].value) if callee_name(left) == "len" else None


def _first_step(test: cst.BaseExpression) -> bool:
    """`curr_iter == 0`, `self.global_step == 0`: a counter of the whole run, true on its first
    step only (not `step == 0` for a loop's `enumerate` index, true once per epoch, nor `epoch == 0`)."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return False
    compared = test.comparisons[0]
    zero = type(compared.comparator) is cst.Integer and compared.comparator.value == "0"
    *qualifiers, counter = (dotted_name(test.left) or "").rsplit(".", 1)[-1].lower().strip("_").split("_")
    of_the_run = bool(set(qualifiers) & _RUN_QUALIFIERS)
    return zero and type(compared.operator) is cst.Equal and counter in _STEP_WORDS and of_the_run


_STEP_WORDS = frozenset(["iter", "iters", "iteration", "step", "steps", "updates"])
_RUN_QUALIFIERS = frozenset(["global", "curr", "cur", "current", "total"])


def first_iteration_calls(caller: Unit) -> set[int]:
    """Calls under a local flag that the guarded block clears (`if restore: self.restore();
    restore = False`) and that no loop around it sets again: once per call of `caller`, on the
    first iteration of its loop, not on every iteration."""
    once: set[int] = set()
    for node, place in placed(caller, cst.If):
        if place.loops and _clears_its_flag(node, place.loops):
            once |= {id(inner) for inner in walk(node.body) if type(inner) is cst.Call}
    return once


def _clears_its_flag(node: cst.If, loops: tuple[cst.For | cst.While, ...]) -> bool:
    """`if flag:` (a local name) whose block sets the flag to `False`, `None` or 0, or `if not
    loaded:` (`loaded is False`, `model is None`) whose block sets it to anything else, and that
    no loop around it sets back (`dirty = True` or `stale += 1` per batch would make it run on
    many batches)."""
    flag, negated = _flag_tested(node.test)
    if flag is None:
        return False
    ends = again = False
    for inner in (inner for loop in loops for inner in walk(loop, into_functions=False)):
        if negated and _binds_otherwise(inner, flag):
            again = True  # `for ckpt in ...`, `ckpt, meta = ...`, `with open(p) as ckpt:`
        if type(inner) is cst.AugAssign and type(inner.target) is cst.Name and inner.target.value == flag:
            again = True
        elif type(inner) is cst.Assign and any(
            type(t.target) is cst.Name and t.target.value == flag for t in inner.targets
        ):
            cleared = (type(inner.value) is cst.Name and inner.value.value in ("False", "None")) or (
                type(inner.value) is cst.Integer and inner.value.value == "0"
            )
            if not negated:
                ends = ends or (cleared and contains(node.body, inner))
                again = again or not cleared
            elif not cleared and contains(node.body, inner):
                ends = True  # `loaded = True` in the block
            else:
                again = True  # `ckpt = paths.get(step)` each iteration may unset it again
    return ends and not again


def _binds_otherwise(node: cst.CSTNode, name: str) -> bool:
    """A binding of `name` other than `name = value`: a loop's target, unpacking, `as`."""
    if type(node) is cst.For:
        target: cst.BaseExpression | None = node.target
    elif type(node) is cst.AsName:
        target = node.name
    elif type(node) is cst.Assign:
        target = next((t.target for t in node.targets if type(t.target) is not cst.Name), None)
    else:
        return False
    return target is not None and name in {n.value for n in walk(target) if type(n) is cst.Name}


def _flag_tested(test: cst.BaseExpression) -> tuple[str | None, bool]:
    """The local name an `if` tests, and whether the test is that it is unset: `flag`, `not
    flag`, `flag is False`, `flag is None`, `flag == False`."""
    if type(test) is cst.Name:
        return test.value, False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not and type(test.expression) is cst.Name:
        return test.expression.value, True
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.left) is cst.Name:
        compared = test.comparisons[0]
        flag = literal_bool(compared.comparator)
        none = type(compared.comparator) is cst.Name and compared.comparator.value == "None"
        if isinstance(compared.operator, (cst.Is, cst.Equal)) and (flag is not None or none):
            return test.left.value, flag is not True
    return None, False


def _own_methods_called(caller: Unit, body: cst.CSTNode) -> list[cst.FunctionDef]:
    """The methods of the caller's class that `body` calls on `self`."""
    cls = caller.cls
    if cls is None or caller.self_name is None:
        return []
    found = []
    for inner in walk(body):
        if type(inner) is cst.Call and type(inner.func) is cst.Attribute:
            owner = inner.func.value
            if type(owner) is cst.Name and owner.value == caller.self_name and inner.func.attr.value in cls.methods:
                found.append(cls.methods[inner.func.attr.value])
    return found


def _lazily_set(test: cst.BaseExpression) -> str | None:
    """`self.x` for the tests `self.x is None` and `not self.x`."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return dotted_name(test.expression)
    left = _compared_to_none(test)
    return dotted_name(left) if left is not None else None


def _compared_to_none(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for the test `x is None`."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    compared = test.comparisons[0]
    none = type(compared.comparator) is cst.Name and compared.comparator.value == "None"
    return test.left if type(compared.operator) is cst.Is and none else None


def callees(index: ModuleIndex, caller: Unit) -> Iterator[tuple[cst.Call, Unit]]:
    """The calls of `caller` that run a function of this module, with the function they run."""
    for node, _ in placed(caller, cst.Call):
        yield from ((node, callee) for callee in _called_units(index, node, caller))


def _called_units(index: ModuleIndex, call: cst.Call, caller: Unit) -> list[Unit]:
    """The functions of this module a call runs: a function, a method of `self` or of an object
    stored on `self`, or the `__call__` of an object stored on `self` (a transform)."""
    func = call.func
    if type(func) is cst.Name:
        found = caller.lookup_def(func.value)
        return [found] if found is not None else []
    if type(func) is cst.Attribute and isinstance(func.value, (cst.Attribute, cst.Subscript)):
        return member_methods(index, func, caller)  # `self.queue.enqueue(k)`, `self.meters["loss"].push(v)`
    if not (type(func) is cst.Attribute and type(func.value) is cst.Name and caller.cls is not None):
        return []
    if func.value.value != caller.self_name:
        return []
    method = method_of(index, caller.cls, func.attr.value)
    if method is not None:
        return [method, *subclass_overrides(index, caller.cls, func.attr.value)]
    inherited = sibling_methods(index, caller.cls, func.attr.value)
    if inherited:
        return inherited
    classes = lineage(index.classes, caller.cls)
    called: list[Unit] = []
    for cls in classes:  # self.transform = Normalize(...): its __call__
        for value, where in cls.attribute_values.get(func.attr.value, []):
            called.extend(target for target, _, _ in resolve_callable(index, value, where))
    return called


def member_methods(index: ModuleIndex, func: cst.Attribute, caller: Unit) -> list[Unit]:
    """`self.queue.enqueue(k)`: the method of the class of this module that every value assigned
    to `self.queue` is an instance of (`KeyQueue(...)`, a parameter annotated `queue: KeyQueue`,
    either branch of `Probe() if cfg.probe else None`); `self.meters["loss"].push(v)`: every value
    put in `self.meters`; `self[k].update(v)` in a subclass of dict: every value put in the object."""
    item = type(func.value) is cst.Subscript
    member = held_by_self(caller, func.value)
    if member is None or caller.cls is None:
        return []
    classes = lineage(index.classes, caller.cls)
    values = [
        (branch, unit)
        for c in classes
        for value, unit in (c.item_values if item else c.attribute_values).get(member, [])
        for branch in ((value.body, value.orelse) if type(value) is cst.IfExp else (value,))
        if not (type(branch) is cst.Name and branch.value == "None")
    ]
    names = {_class_of(value, unit) for value, unit in values}
    if len(names) != 1 or (cls := index.classes.get(names.pop() or "")) is None:
        return []
    method = method_of(index, cls, func.attr.value)
    return [method] if method is not None else []


def _class_of(value: cst.BaseExpression, unit: Unit) -> str | None:
    """The class a value is an instance of, as far as the code says: `Cls(...)`, or a parameter
    of `unit` annotated with one class."""
    if type(value) is cst.Call:
        return callee_name(value)
    return annotated_class(value.value, unit) if type(value) is cst.Name else None


def annotated_class(name: str, unit: Unit) -> str | None:
    """The one class the annotation of `unit`'s parameter `name` gives (`x: Cls`, `x: Cls | None`)."""
    node = unit.node
    params = all_params(node.params) if type(node) is cst.FunctionDef else []
    return next((single_class(annotation_words(p)) for p in params if p.name.value == name), None)


def annotation_words(annotated: cst.Param | cst.AnnAssign) -> set[str]:
    """The names in a parameter's or a variable's annotation: `Optional[torch.Tensor]` -> Optional,
    torch, Tensor."""
    if annotated.annotation is None:
        return set()
    return expression_words(annotated.annotation.annotation)


def expression_words(annotation: cst.BaseExpression) -> set[str]:
    """The names in an annotation's expression (see `annotation_words`)."""
    if type(annotation) is cst.Name or type(annotation) is cst.Attribute:
        dotted = dotted_name(annotation)  # `int`, `torch.Tensor`: most annotations, without a walk
        if dotted is not None:
            return set(dotted.split("."))
    words: set[str] = set()
    for node in [annotation, *walk(annotation)]:
        if type(node) is cst.Name:
            words.add(node.value)
        elif type(node) is cst.SimpleString:  # "torch.Tensor" as a string annotation
            words.update(node.value.strip("'\"").replace("[", " ").replace("]", " ").replace(".", " ").split())
    return words


def holds_tensors(cls: ClassInfo) -> bool:
    """A record with a field annotated as a tensor (`state: torch.Tensor` in a dataclass of
    transitions): an instance keeps the tensors it is built from, where they are."""
    return cls.is_record and any(
        type(small) is cst.AnnAssign and "Tensor" in annotation_words(small)
        for statement in cls.node.body.body
        if type(statement) is cst.SimpleStatementLine
        for small in statement.body
    )


def single_class(words: set[str]) -> str | None:
    """The one name an annotation gives, optional or not: `ErrorMeter`, `Optional[ErrorMeter]`,
    `ErrorMeter | None`; not `list[Sample]`, which is no instance of `Sample`."""
    named = words - {"Optional", "Union", "None"}
    return next(iter(named)) if len(named) == 1 else None


def subclass_overrides(index: ModuleIndex, cls: ClassInfo, name: str) -> list[Unit]:
    """The methods `name` of the file's subclasses of `cls` that override it: `self.after_loss(d)`
    in a base class's template runs a subclass's `after_loss` for that subclass's instances."""
    key = (id(cls), name)
    found = index.overriding.get(key)
    if found is None:
        found = index.overriding[key] = [
            index.method_units[id(sub.methods[name])]
            for sub in index.classes.values()
            if sub is not cls and name in sub.methods and cls in lineage(index.classes, sub)
        ]
    return found


def sibling_methods(index: ModuleIndex, cls: ClassInfo, name: str) -> list[Unit]:
    """A mixin's `self._after_backward()` that a sibling mixin defines: what the MRO of each class
    of the file that inherits from the mixin finds."""
    found = [m for heir in heirs(index.classes, cls) if (m := method_of(index, heir, name)) is not None]
    return list({id(m): m for m in found}.values())


def method_of(index: ModuleIndex, cls: ClassInfo, name: str) -> Unit | None:
    """The unit of the method `name` that an instance of `cls` runs: its own, or a base class's."""
    owner = next((c for c in lineage(index.classes, cls) if name in c.methods), None)
    return index.method_units[id(owner.methods[name])] if owner is not None else None


def qualified_name(unit: Unit) -> str:
    """`Trainer.fit` for a method, `train` for a function."""
    return f"{unit.cls.name}.{unit.name}" if unit.is_method and unit.cls is not None else unit.name


def _called_on_member(call: cst.Call, caller: Unit) -> bool:
    """`self.queue.enqueue(k)`, `self.meters["loss"].push(v)`: a method of an object `self` keeps."""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    member = outer_container(func.value)
    return type(member) is cst.Attribute and self_attribute(caller, member) is not None


def outer_container(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The container an item of it is: `self.values` for `self.values[key]`."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return expr


def emptied_each(loop: cst.For | cst.While) -> list[cst.BaseExpression]:
    """`for buf in (self.inputs, self.outputs): buf.clear()`: the containers it empties, each."""
    if not (type(loop) is cst.For and type(loop.target) is cst.Name and isinstance(loop.iter, cst.Tuple | cst.List)):
        return []
    name = loop.target.value
    body = loop.body.body if type(loop.body) is cst.IndentedBlock else []
    clears = any(
        type(small) is cst.Expr
        and type(small.value) is cst.Call
        and callee_name(small.value) == "clear"
        and type(receiver(small.value)) is cst.Name
        and cast(cst.Name, receiver(small.value)).value == name
        for line in body
        if type(line) is cst.SimpleStatementLine
        for small in line.body
    )
    return [element.value for element in loop.iter.elements] if clears else []


def _backpropagates_a_loss(name: str, call: cst.Call) -> bool:
    """A helper named for backpropagating, handed a loss (`model_backward_and_update(loss_x)`,
    `backward_step(loss)`); not a hook's registration (`register_full_backward_hook`), a function
    that runs both passes (`joint_forward_backward(*args)`), nor a question about the backward
    pass asked of something else (`_should_recompute_in_backward(bsym)`)."""
    words = set(name.lower().split("_"))
    if "backward" not in words or words & {"hook", "hooks", "register", "forward"}:
        return False
    first = call.args[0] if call.args else None
    handed = dotted_name(first.value) if first is not None and first.keyword is None and not first.star else None
    return handed is not None and is_loss_name(handed.rsplit(".", 1)[-1])


def arguments_by_position(call: cst.Call, target: Unit) -> dict[int, cst.BaseExpression]:
    """The call's arguments by the position of the parameter they bind (keywords matched by name;
    a method's `self` is not counted)."""
    node = target.node
    params = [p.name.value for p in target.argument_params]
    found: dict[int, cst.BaseExpression] = {}
    position = 0
    extra: list[cst.BaseDictElement] = []  # keywords and `**mapping`s that `**kwargs` takes
    star = node.params.star_arg if isinstance(node, cst.FunctionDef | cst.Lambda) else None
    rest: list[cst.BaseElement] = []  # the positionals past the named ones, which `*args` takes
    named = 0
    if isinstance(node, cst.FunctionDef | cst.Lambda) and type(star) is cst.Param:
        skipped = len(target.params) - len(params)  # a method's `self`
        named = len(node.params.posonly_params) + len(node.params.params) - skipped
    for arg in call.args:
        if arg.star == "**":
            extra.append(cst.StarredDictElement(arg.value))  # `record(step, **stats)`
            continue
        if arg.star:
            break
        if arg.keyword is None and type(star) is cst.Param and position >= named:
            rest.append(cst.Element(arg.value))  # `memory.push(state, action, reward)` into `*args`
        elif arg.keyword is None:
            found[position] = arg.value
            position += 1
        elif arg.keyword.value in params:
            found[params.index(arg.keyword.value)] = arg.value
        else:
            extra.append(cst.DictElement(cst.SimpleString(repr(arg.keyword.value)), arg.value))
    if rest and type(star) is cst.Param and star.name.value in params:
        found[params.index(star.name.value)] = cst.Tuple(rest)
    kwargs = node.params.star_kwarg if isinstance(node, cst.FunctionDef | cst.Lambda) else None
    if extra and type(kwargs) is cst.Param and kwargs.name.value in params:
        # `log(loss=loss)`, `log(**stats)`: `values` holds them
        found[params.index(kwargs.name.value)] = cst.Dict(extra)
    return found


def constructor_arguments(index: ModuleIndex, init: Unit, param: str) -> list[tuple[cst.BaseExpression, Unit]]:
    """What the file's `Cls(...)` calls give `__init__`'s parameter, with the unit of each call:
    `SpeechCommands(items, transform=GPUAugment())` gives `transform` a `GPUAugment`."""
    if init.cls is None or type(init.node) is not cst.FunctionDef:
        return []
    params = [p.name.value for p in init.argument_params]
    if param not in params:
        return []
    given = []
    for call, caller in index.named_calls.get(init.cls.name, []):
        arg = arguments_by_position(call, init).get(params.index(param))
        if arg is not None:
            given.append((arg, caller))
    return given


def _find_graph_producers(index: ModuleIndex, unit: Unit) -> None:
    """What reaches `backward()` or a loss; and the callables that computed it: modules.

    `out = model(x); loss = criterion(out, y)` or `loss.backward()`: whatever `model` is, its
    output carries a graph, which is all that calling a module means to the rules.
    """
    reached: set[str] = set()
    for expr in unit.backpropagated:
        reached |= references(expr)
    unit.backpropagated_names = set(reached)
    _note_graph_holders(unit)
    _follow_bindings(unit.backpropagated_names, unit, index)
    loss_inputs = [arg.value for loss in unit.loss_calls for arg in loss.args]
    for value in loss_inputs:  # criterion(model(x), y): the call inside is a producer too
        _note_producer(value, unit, index)
    _follow_bindings({name for value in loss_inputs for name in references(value)}, unit, index)


def _note_graph_holders(unit: Unit) -> None:
    """`output = self.train_step(batch); loss = output["train_loss"]; loss.backward()`: a structure
    whose item or field is backpropagated holds a graph, whatever the call that made it."""
    todo = list(unit.graph_evidence)
    while todo:
        name = todo.pop()
        for value in unit.bindings.get(name, []):
            holder = _projected_name(value)
            if holder is not None and holder != unit.self_name and holder not in unit.graph_evidence:
                unit.graph_evidence[holder] = unit.graph_evidence[name]
                unit.graph_holders.add(holder)
                todo.append(holder)


def _projected_name(expr: cst.BaseExpression) -> str | None:
    """`out` for `out["loss"]`, `out.loss` or `out[0].loss`: the name an item or field is read from."""
    if not isinstance(expr, (cst.Subscript, cst.Attribute)):
        return None
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if type(expr) is cst.Name else None


def _follow_bindings(reached: set[str], unit: Unit, index: ModuleIndex) -> None:
    """Grow `reached` with every name its assignments read; note the callables met on the way."""
    todo = list(reached)
    while todo:
        name = todo.pop()
        for value in [*unit.bindings.get(name, []), *unit.augmented.get(name, [])]:
            _note_producer(value, unit, index)
            for name in references(value) - reached:
                reached.add(name)
                todo.append(name)


def _note_producer(value: cst.BaseExpression, unit: Unit, index: ModuleIndex) -> None:
    """A plain call whose result reaches a loss or `backward()` is a module's call."""
    if type(value) is not cst.Call or index.imports.qualify(value.func) is not None:
        return
    callee = dotted_name(value.func)
    head, _, attribute = (callee or "").partition(".")
    if unit.cls is not None and head == unit.self_name and attribute and "." not in attribute:
        if attribute not in unit.cls.methods:  # self.helper(x) is a method, not a submodule
            unit.cls.module_attributes.add(attribute)  # self.model(x)
    elif (
        callee is not None
        and "." not in callee
        and callee not in index.classes
        and callee not in _BUILTINS
        and unit.lookup_def(callee) is None  # a function of this module is summarised instead
    ):
        unit.module_evidence.add(callee)


_TORCH_CONCATENATIONS = frozenset(
    ["torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"]
)
_BUILTINS = frozenset(
    ["sum", "max", "min", "abs", "float", "int", "len", "list", "tuple", "dict", "zip", "next", "iter"]
)


def _classify_classes(index: ModuleIndex) -> None:
    """Module classes: a base is a torch module or a module class of this file.

    A base imported from elsewhere in the project says nothing by itself; a `forward` method
    in the class or in a subclass of the file then says that the hierarchy is one of modules.
    """
    classes = index.classes
    for cls in classes.values():
        for base in filter(None, cls.base_names):
            if base.startswith("torch.autograd.") and base.endswith("Function"):
                cls.is_autograd_function = True
            elif is_torch_module_class(base):
                cls.is_module = True
    for cls in classes.values():
        if "forward" in cls.methods and not cls.is_autograd_function:
            for ancestor in lineage(classes, cls):
                if any(b and b not in classes and not is_plain_base(b) for b in ancestor.base_names):
                    cls.is_module = True
    changed = True
    while changed:  # a class whose local base is a module class is one too
        changed = False
        for cls in classes.values():
            if not (cls.is_module or cls.is_autograd_function) and any(c.is_module for c in lineage(classes, cls)[1:]):
                cls.is_module = changed = True


def _assign_forward_roles(index: ModuleIndex) -> None:
    """`forward` of any class (a plain wrapper's runs once per step too), and per-step methods."""
    for unit in index.units:
        cls = unit.cls
        if cls is None or cls.is_autograd_function or type(unit.node) is not cst.FunctionDef:
            continue
        if index.method_units.get(id(unit.node)) is not unit or _is_static(unit.node):
            continue
        if unit.name in cls.forward_names or (unit.name in _PROPAGATE_STEPS and _passes_messages(index, cls)):
            unit.roles[Role.FORWARD] = f"`{cls.name}.{unit.name}`"
        elif is_step_method(unit.name) and not (unit.name == "__call__" and cls.is_module):
            if _private(unit.name) and _called_on_self_in_its_lineage(index, unit):
                continue  # `_make_beam_step`, which `step` calls: a helper, run as often as its caller
            if unit.name != "process" or _processes_step_outputs(cls, unit):
                unit.roles[Role.STEP] = f"`{cls.name}.{unit.name}` (called once per batch)"
        elif unit.name == "step" and _is_an_optimizer(index, cls):
            unit.roles[Role.STEP] = f"`{cls.name}.step` (an optimizer's step, run once per batch)"
        elif steps_once(unit) and not _called_by_its_class(index, unit):
            unit.roles[Role.STEP] = f"`{cls.name}.{unit.name}` (a training step: it calls `backward()`)"


def _is_an_optimizer(index: ModuleIndex, cls: ClassInfo) -> bool:
    """A subclass of `torch.optim.Optimizer` (or of one of its optimizers), here or by its base's name."""
    return any(
        base is not None and (base.startswith("torch.optim.") or base.split(".")[-1] == "Optimizer")
        for info in lineage(index.classes, cls)
        for base in info.base_names
    )


def _private(name: str) -> bool:
    """`_make_beam_step`: named as a helper of its class (a framework calls public methods)."""
    return name.startswith("_") and not name.startswith("__")


def _called_on_self_in_its_lineage(index: ModuleIndex, method: Unit) -> bool:
    """Whether a method of its class or of a base in the file calls it on `self` (a base's `step`
    calling `self._step(...)`, which the subclass overrides)."""
    assert method.cls is not None
    family = {id(c) for c in lineage(index.classes, method.cls)}
    for other in index.method_units.values():
        if other is method or other.cls is None or id(other.cls) not in family or other.self_name is None:
            continue
        for call, _ in placed(other, cst.Call):
            func = call.func
            if (
                type(func) is cst.Attribute
                and func.attr.value == method.name
                and type(func.value) is cst.Name
                and func.value.value == other.self_name
            ):
                return True
    return False


def _processes_step_outputs(cls: ClassInfo, unit: Unit) -> bool:
    """`process` is an evaluator's or a metric's per-batch method (detectron2's `process(inputs,
    outputs)`, mmengine's `process(data_batch, data_samples)`) in a class named so or handed a
    batch's outputs; elsewhere it is any processing (`CodeFormerRestoration.process(image)`)."""
    names = [cls.name, *(base.rsplit(".", 1)[-1] for base in cls.base_names if base)]
    if any(set(class_words(name)) & _EVALUATOR_WORDS for name in names):
        return True
    return bool({p.name.value for p in unit.argument_params} & _STEP_OUTPUT_PARAMS)


_EVALUATOR_WORDS = frozenset(["evaluator", "evaluation", "metric", "metrics", "meter", "accumulator", "tracker"])
_STEP_OUTPUT_PARAMS = frozenset(["outputs", "output", "data_batch", "data_samples", "batch", "preds", "predictions"])


# What a graph network's `self.propagate(...)` runs in `forward` (PyTorch Geometric's `MessagePassing`).
_PROPAGATE_STEPS = frozenset(["message", "aggregate", "update", "message_and_aggregate", "edge_update"])


def _passes_messages(index: ModuleIndex, cls: ClassInfo) -> bool:
    return any(base and base.endswith("MessagePassing") for c in lineage(index.classes, cls) for base in c.base_names)


def steps_once(unit: Unit) -> bool:
    """Whether a function is one training step, whatever its name: it calls `backward()` outside
    any loop of its own, or only in loops over a fixed count of passes on what it is handed that
    step an optimizer (a PPO update's `for _ in range(self.ppo_epochs)` over its batch). Nobody
    builds and backpropagates a graph once per run: the caller loops."""
    if not unit.backpropagated or unit.name in ("__init__", "<module>"):
        return False
    handed = type(unit.node) is cst.FunctionDef and bool(unit.argument_params)
    calls = placed(unit, cst.Call)
    # Passes that step no optimizer backpropagate to the input, not to train: Langevin sampling,
    # an adversarial attack's `for _ in range(steps): loss.backward(); x = x + a * x.grad.sign()`.
    updates = any(steps_an_optimizer(call) for call, _ in calls)
    return any(
        callee_name(call) in ("backward", "manual_backward")
        and (not place.loops or (handed and updates and all(_passes(loop) for loop in place.loops)))
        for call, place in calls
    )


def _passes(loop: cst.For | cst.While) -> bool:
    """`for _ in range(self.args.epochs)`: a count of passes, not a loop over data (`range(len(X))`,
    `range(0, n, batch_size)` index data)."""
    if type(loop) is not cst.For or type(loop.iter) is not cst.Call or callee_name(loop.iter) != "range":
        return False
    args = loop.iter.args
    return len(args) == 1 and isinstance(args[0].value, (cst.Name, cst.Attribute, cst.Integer))


def _called_by_its_class(index: ModuleIndex, method: Unit) -> bool:
    """Whether another method of the class calls it on `self`: then how often it runs is its
    caller's to say (a loop there, or a role spread from it), not a guess from its body."""
    return any(
        callee is method
        for other in index.method_units.values()
        if other.cls is method.cls and other is not method
        for _, callee in callees(index, other)
    )


def _assign_hook_roles(index: ModuleIndex) -> None:
    for call, unit, role in index.hook_calls:
        if not call.args:
            continue
        registration = callee_name(call) or ""
        gradients = role is Role.TENSOR_HOOK or "backward" in registration
        for target, skip, skip_keywords in resolve_callable(index, call.args[0].value, unit):
            target.given_gradients = gradients and (target.given_gradients or not target.roles)
            target.given_parameter = registration == "register_post_accumulate_grad_hook"
            target.roles[role] = f"registered with `{registration}`"
            target.skip_params, target.skip_keywords = skip, skip_keywords
        _bind_registered_arguments(index, call.args[0].value, unit)


_IGNITE_ENGINES = frozenset(["Engine", "DeterministicEngine"])
# ignite's events fired on every iteration of a run (`Events.ITERATION_COMPLETED(every=10)` too)
_ITERATION_EVENTS = frozenset(["ITERATION_STARTED", "ITERATION_COMPLETED", "GET_BATCH_STARTED", "GET_BATCH_COMPLETED"])


def _assign_event_handler_roles(index: ModuleIndex, registrations: list[tuple[cst.Call, Unit]]) -> None:
    """ignite's handlers of an iteration event (`trainer.add_event_handler(Events.ITERATION_COMPLETED,
    keep)`, `@trainer.on(Events.ITERATION_COMPLETED(every=10))`) run once per iteration of the
    engine's run, as a framework's per-step method does; each knows the engines it may be
    attached to: the one its registration names, or any of the file's."""
    handlers = [(call, unit, _registered(index, call.args[1].value, unit)) for call, unit in registrations]
    for unit in index.units:
        for decorator in unit.node.decorators if type(unit.node) is cst.FunctionDef and unit.parent else ():
            on = decorator.decorator
            if type(on) is cst.Call and callee_name(on) == "on" and receiver(on) is not None and on.args:
                handlers.append((on, unit.parent, [unit]))  # type: ignore[arg-type]
    for call, unit, targets in handlers:
        if not _each_iteration(call.args[0].value):
            continue
        engines = _engines_named(index, receiver(call), unit)
        for target in targets:
            target.roles.setdefault(Role.STEP, f"`{qualified_name(target)}` (an ignite handler run on every iteration)")
            index.handler_engines.setdefault(id(target), []).extend(engines)


def _registered(index: ModuleIndex, handler: cst.BaseExpression, unit: Unit) -> list[Unit]:
    """The functions a handler given to `add_event_handler` runs: `self` runs its `__call__`."""
    if type(handler) is cst.Name and handler.value == unit.self_name and unit.cls is not None:
        method = method_of(index, unit.cls, "__call__")
        return [method] if method is not None else []
    return [target for target, _, _ in resolve_callable(index, handler, unit)]


def _each_iteration(event: cst.BaseExpression) -> bool:
    """`Events.ITERATION_COMPLETED`, `Events.ITERATION_COMPLETED(every=50)`, or either side of
    `Events.ITERATION_COMPLETED | Events.COMPLETED`; not `Events.ITERATION_COMPLETED(once=1)`."""
    if type(event) is cst.BinaryOperation:
        return _each_iteration(event.left) or _each_iteration(event.right)
    if type(event) is cst.Call:
        if any(arg.keyword is not None and arg.keyword.value == "once" for arg in event.args):
            return False
        event = event.func
    return type(event) is cst.Attribute and event.attr.value in _ITERATION_EVENTS


def _engines_named(index: ModuleIndex, engine: cst.BaseExpression | None, unit: Unit) -> list[tuple[cst.Call, Unit]]:
    """The file's `Engine(...)` calls that `engine` is bound to in `unit`, or, for a parameter
    (`attach(self, engine)`), that every call of `unit` in the file hands it
    (`history.attach(trainer)`); all of them when the code does not say."""
    return _engines_bound(index, engine, unit, 0) or index.engines


def _engines_bound(
    index: ModuleIndex, engine: cst.BaseExpression | None, unit: Unit, depth: int
) -> list[tuple[cst.Call, Unit]]:
    if type(engine) is not cst.Name or depth > 2:
        return []
    bound = list(unit.lookup_bindings(engine.value))
    for value in list(bound):  # `trainer = create_trainer(...)`, a function of the file returning `Engine(update)`
        factory = (
            unit.lookup_def(value.func.value) if type(value) is cst.Call and type(value.func) is cst.Name else None
        )
        bound += returned_values(factory) if factory is not None else []
    named = [(call, maker) for call, maker in index.engines if any(value is call for value in bound)]
    params = [p.name.value for p in unit.argument_params]
    if named or engine.value not in params or type(unit.node) is not cst.FunctionDef:
        return named
    found: list[tuple[cst.Call, Unit]] = []
    for caller in index.units:
        for call, _ in placed(caller, cst.Call):
            if callee_name(call) != unit.name or not _calls_unit(index, call, caller, unit):
                continue
            handed = _engines_bound(
                index, arguments_by_position(call, unit).get(params.index(engine.value)), caller, depth + 1
            )
            if not handed:
                return []  # a call that hands some other engine, or one the code does not say
            found += handed
    return found


def _calls_unit(index: ModuleIndex, call: cst.Call, caller: Unit, unit: Unit) -> bool:
    """Whether a call by the unit's name runs it: the function itself, or the method on an
    instance of its class (`LossHistory().attach(trainer)`, `history.attach(trainer)`)."""
    func = call.func
    if not unit.is_method:
        return type(func) is cst.Name and caller.lookup_def(func.value) is unit
    if type(func) is not cst.Attribute or unit.cls is None:
        return False
    owner = func.value
    if type(owner) is cst.Name and owner.value == caller.self_name:
        classes = [caller.cls] if caller.cls is not None else []
    else:
        classes = _instance_classes(index, owner, caller, 0)
    return any(unit.cls in lineage(index.classes, cls) for cls in classes)


def own_container_items(loop: cst.For, unit: Unit) -> tuple[str | None, cst.BaseExpression | None]:
    """(`values`, `self.curves`) for `for key, values in self.curves.items():`, `for values in
    self.curves.values():` or `for values in self.curves:`: the loop variable that is an item of a
    container of the object, and that container; (None, None) for other loops."""
    target: cst.BaseExpression = loop.target
    iterated = loop.iter
    method = callee_name(iterated) if type(iterated) is cst.Call and not iterated.args else None
    if type(iterated) is cst.Call and type(iterated.func) is cst.Attribute and method in ("items", "values"):
        if method == "items" and type(target) is cst.Tuple and len(target.elements) == 2:
            target = target.elements[1].value
        iterated = iterated.func.value
    if type(target) is not cst.Name or self_attribute(unit, iterated) is None:
        return None, None
    return target.value, iterated


def _assign_unseen_hook_roles(index: ModuleIndex) -> None:
    """A function shaped like a module hook (`def save(module, inp, out)`, a `__call__` or a method
    taking them) in a module that registers no hook and never calls it: another module of the
    project registers it (`layer.register_forward_hook(hooks.save)`), so it runs on every call
    of a network's forward (or backward, given gradients)."""
    if index.registers_hooks:
        return  # the module's own registrations say which of its functions are hooks
    for unit in index.units:
        # (`__call__` is a per-step method by its name alone: a hook's parameters say more)
        if set(unit.roles) - ({Role.STEP} if unit.name == "__call__" else set()):
            continue
        if type(unit.node) is not cst.FunctionDef or unit.name in index.named_calls:
            continue
        names = [p.name.value for p in unit.argument_params]
        if len(names) == 4 and names[2] in ("kwargs", "_kwargs"):
            names = [names[0], names[1], names[3]]  # `with_kwargs=True`: (module, args, kwargs, output)
        if len(names) != 3 or type(unit.node.params.star_arg) is cst.Param:
            continue
        module, given, made = (name.lower() for name in names)
        if (
            module.lstrip("_") in HOOKED_MODULE_NAMES
            and given.lstrip("_") in _HOOK_INPUT_NAMES
            and made.lstrip("_") in _HOOK_OUTPUT_NAMES
        ):
            unit.given_gradients = made.startswith("grad")
            unit.roles.pop(Role.STEP, None)
            unit.roles[Role.MODULE_HOOK] = f"taking `({', '.join(names)})`, registered elsewhere"


# The parameters of a module hook `(module, input, output)` as code names them (forward and
# backward hooks); names may start with `_` (`_module`, `_`, `__`). Not `(model, x, y)`: that is
# how an evaluation helper is written.
HOOKED_MODULE_NAMES = frozenset(["", "module", "mod", "m", "layer", "model", "net", "submodule", "self_module"])
_HOOK_INPUT_NAMES = frozenset(
    ["", "input", "inputs", "inp", "inps", "i", "args", "in", "input_", "in_", "grad_input", "grad_in", "grad_inputs"]
)
_HOOK_OUTPUT_NAMES = frozenset(
    ["output", "outputs", "out", "outs", "o", "result", "grad_output", "grad_out", "grad_outputs"]
)


def is_partial(imports: Imports, call: cst.Call) -> bool:
    """`functools.partial(f, ...)`, also imported by name."""
    return (imports.qualify(call.func) or dotted_name(call.func)) in ("functools.partial", "partial")


def _bind_registered_arguments(index: ModuleIndex, hook: cst.BaseExpression, unit: Unit) -> None:
    """What a registration binds for the life of the hook: the arguments of `partial(save, acts)`
    to `save`'s parameters, those of a factory `make_hook(acts)` to the factory's."""
    if type(hook) is not cst.Call or not hook.args:
        return
    if is_partial(index.imports, hook):
        targets = [target for target, _, _ in resolve_callable(index, hook.args[0].value, unit)]
        bound = cst.Call(hook.args[0].value, hook.args[1:])
    else:
        targets = [factory for factory, _, _ in resolve_callable(index, hook.func, unit)]
        bound = hook
    for target in targets:
        if type(target.node) is not cst.FunctionDef:
            continue
        params = [p.name.value for p in target.argument_params]
        for position, arg in arguments_by_position(bound, target).items():
            if position < len(params):
                target.bound_containers.setdefault(params[position], (unit, arg))


def _assign_worker_roles(index: ModuleIndex, call: cst.Call, unit: Unit, in_main_process: set[int]) -> None:
    """What a DataLoader runs in its workers; with `num_workers=0`, what it runs in this process."""
    workers = argument(call, "num_workers", 5)
    has_workers = workers is not None and not _is_zero(workers, index)
    index.loader_calls.append(LoaderCall(call, unit, has_workers))
    run: list[tuple[Unit, str]] = []
    for keyword in ("collate_fn", "worker_init_fn"):
        fn = argument(call, keyword, 8 if keyword == "collate_fn" else None)
        if fn is not None:
            for target, skip, skip_keywords in resolve_callable(index, fn, unit):
                target.skip_params, target.skip_keywords = skip, skip_keywords
                run.append((target, f"`{keyword}` of a DataLoader with workers"))
    dataset = argument(call, "dataset", 0)
    for cls in _dataset_classes(index, dataset, unit) if dataset is not None else []:
        for method in _DATASET_METHODS:
            node = cls.methods.get(method)
            if node is not None:
                run.append((index.method_units[id(node)], f"`{cls.name}.{method}`, run by a DataLoader with workers"))
    for target, why in run:
        if has_workers:
            target.roles[Role.WORKER] = why
            target.loaders.append(call)
        else:
            in_main_process.add(id(target))


def _assign_unseen_loader_roles(index: ModuleIndex, in_main_process: set[int]) -> None:
    """A dataset's item methods and collate functions run in DataLoader workers as soon as some
    loader sets `num_workers > 0`, in this file or another: worker code, unless every loader that
    visibly runs them keeps them in the main process."""
    candidates: list[tuple[Unit, str, str]] = []  # (unit, why, what a loader is given to run it)
    for cls in index.classes.values():
        if is_dataset_class(index, cls):
            for method in _DATASET_METHODS:
                node = cls.methods.get(method)
                if node is not None:
                    why = f"`{cls.name}.{method}`, which DataLoader workers run when `num_workers > 0`"
                    candidates.append((index.method_units[id(node)], why, cls.name))
    for unit in index.units:
        name = unit.name.lower() if type(unit.node) is cst.FunctionDef else ""
        # Given the samples or the worker's id: not `test_collate_checkpoint()`, which pytest runs.
        given = bool(unit.argument_params) and not name.startswith("test")
        if given and ("collate" in name or "worker_init" in name) and unit.name not in index.pool_initializers:
            why = f"`{unit.name}`, which DataLoader workers run when `num_workers > 0`"
            candidates.append((unit, why, unit.name))
    for unit, why, run_as in candidates:
        if Role.WORKER not in unit.roles and id(unit) not in in_main_process:
            unit.roles[Role.WORKER] = why
            unit.run_elsewhere_as = run_as


def is_dataset_class(index: ModuleIndex, cls: ClassInfo) -> bool:
    """A subclass of `Dataset`/`IterableDataset` (torch's, or a library's), here or through a local base."""
    return any(
        (base or "").rsplit(".", 1)[-1].endswith("Dataset") for ancestor in lineage(index.classes, cls)
        for base in ancestor.base_names
    )  # fmt: skip


def _is_zero(expr: cst.BaseExpression, index: ModuleIndex) -> bool:
    if type(expr) is cst.Integer:
        return expr.evaluated_value == 0
    if type(expr) is cst.Name:  # NUM_WORKERS = 0 at module level
        values = index.module_unit.bindings.get(expr.value, [])
        return bool(values) and all(type(v) is cst.Integer and v.evaluated_value == 0 for v in values)
    return False


def _instance_classes(index: ModuleIndex, expr: cst.BaseExpression, unit: Unit, depth: int) -> list[ClassInfo]:
    """The classes of this module that an expression may be an instance of: `Keeper(...)`, or a
    name or `self` attribute assigned one."""
    if depth > 3:
        return []
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in index.classes:
        return [index.classes[expr.func.value]]
    values: list[cst.BaseExpression] = []
    if type(expr) is cst.Name and expr.value != unit.self_name:
        values = unit.lookup_bindings(expr.value)
    elif (attribute := self_attribute(unit, expr)) is not None and unit.cls is not None:
        values = [v for cls in lineage(index.classes, unit.cls) for v, _ in cls.attribute_values.get(attribute, [])]
    return [cls for value in values for cls in _instance_classes(index, value, unit, depth + 1)]


def resolve_callable(
    index: ModuleIndex, expr: cst.BaseExpression, unit: Unit, depth: int = 0
) -> list[tuple[Unit, int, Mapping[str, cst.BaseExpression]]]:
    """The functions a callable expression stands for, with the parameters partial() binds: how
    many leading ones, and which by keyword, to what."""
    if depth > 3:
        return []
    if type(expr) is cst.Lambda:
        return [(index.unit_for_lambda(expr), 0, {})]
    if type(expr) is cst.Name:
        found = unit.lookup_def(expr.value)
        if found is not None:
            return [(found, 0, {})]
        results = []
        for value in unit.lookup_bindings(expr.value):
            results.extend(resolve_callable(index, value, unit, depth + 1))
        if not results and unit.name == "__init__":  # `self.transform = transform`: what callers pass
            for value, caller in constructor_arguments(index, unit, expr.value):
                results.extend(resolve_callable(index, value, caller, depth + 1))
        return results
    if type(expr) is cst.Attribute:
        name = expr.attr.value
        own = type(expr.value) is cst.Name and expr.value.value == unit.self_name
        # `self.keep`, or a bound method of a helper object: `Keeper(self).keep`, `keeper.keep`.
        classes = ([unit.cls] if unit.cls else []) if own else _instance_classes(index, expr.value, unit, depth + 1)
        methods = [cls.methods[name] for made in classes for cls in lineage(index.classes, made) if name in cls.methods]
        return [(index.method_units[id(methods[0])], 0, {})] if methods else []
    if type(expr) is cst.Call:
        if is_partial(index.imports, expr) and expr.args:
            positional = sum(1 for a in expr.args[1:] if a.keyword is None and not a.star)
            keywords = {a.keyword.value: a.value for a in expr.args[1:] if a.keyword is not None}
            return [
                (target, skip + positional, {**keys, **keywords})
                for target, skip, keys in resolve_callable(index, expr.args[0].value, unit, depth + 1)
            ]
        if type(expr.func) is cst.Name:
            cls = index.classes.get(expr.func.value)
            if cls is not None and "__call__" in cls.methods:  # a callable class instance
                return [(index.method_units[id(cls.methods["__call__"])], 0, {})]
        if callee_name(expr) == "Compose" and expr.args and isinstance(expr.args[0].value, (cst.List, cst.Tuple)):
            steps = expr.args[0].value.elements  # transforms.Compose([Resize(), ToDevice()]): each step runs
            return [found for step in steps for found in resolve_callable(index, step.value, unit, depth + 1)]
        # A factory: `register_forward_hook(self.make_hook(name))` registers what it returns.
        return [
            found
            for factory, _, _ in resolve_callable(index, expr.func, unit, depth + 1)
            for returned in returned_values(factory)
            for found in resolve_callable(index, returned, factory, depth + 1)
        ]
    return []


def returned_values(unit: Unit) -> list[cst.BaseExpression]:
    """What a function's own `return` statements give (not those of functions nested in it)."""
    node = unit.node
    if type(node) is cst.Lambda:
        return [node.body]
    if type(node) is not cst.FunctionDef:
        return []
    return [n.value for n in walk(node.body, into_functions=False) if type(n) is cst.Return and n.value is not None]


def _dataset_classes(index: ModuleIndex, expr: cst.BaseExpression, unit: Unit, depth: int = 0) -> list[ClassInfo]:
    if depth > 3:
        return []
    if type(expr) is cst.Call and type(expr.func) is cst.Name:
        cls = index.classes.get(expr.func.value)
        return [cls] if cls is not None else []
    if type(expr) is cst.Name:
        found: list[ClassInfo] = []
        for value in unit.lookup_bindings(expr.value):
            found.extend(_dataset_classes(index, value, unit, depth + 1))
        return found
    attribute = self_attribute(unit, expr)
    if attribute is not None:
        assert unit.cls is not None
        found = []
        for value, _ in unit.cls.attribute_values.get(attribute, []):
            found.extend(_dataset_classes(index, value, unit, depth + 1))
        return found
    return []


_RECORD_DECORATORS = frozenset(["dataclass", "dataclasses.dataclass", "attrs.define", "attr.s", "define", "frozen"])
_PLAIN_BASES = ("object", "ABC", "abc.", "typing.", "enum.", "Generic", "Protocol", "NamedTuple", "dataclasses.")


def _shares_annotated_fields(info: ClassInfo, node: cst.ClassDef, decorators: set[str | None]) -> bool:
    """Whether `cache: dict = {}` in the class body is one dict for every instance: in a plain
    class (no dataclass decorator, metaclass or base of a library that could copy it per instance)."""
    if info.is_record or any(arg.keyword is not None for arg in node.bases):
        return False
    if any(name and name.endswith("dataclass") for name in decorators):
        return False  # `@chex.dataclass`, `@pydantic.dataclasses.dataclass`
    return all(base and (is_plain_base(base) or is_torch_module_class(base)) for base in info.base_names)


def _is_class_var(annotation: cst.Annotation) -> bool:
    """`ClassVar[dict]`: a class attribute even in a dataclass."""
    hint = annotation.annotation
    name = dotted_name(hint.value if type(hint) is cst.Subscript else hint) or ""
    return name.rsplit(".", 1)[-1] == "ClassVar"


def is_plain_base(base: str) -> bool:
    """Bases that say nothing about being a module; torch's own non-module classes too."""
    return base.startswith(_PLAIN_BASES) or (base.startswith("torch.") and not is_torch_module_class(base))


def _base_name(expr: cst.BaseExpression, imports: Imports) -> str | None:
    qualified = imports.qualify(expr)
    if qualified is not None:
        return qualified
    return dotted_name(expr)


def _is_static(node: cst.FunctionDef) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in node.decorators)


def all_params(params: cst.Parameters) -> list[cst.Param]:
    """Every parameter: positional-only, plain, keyword-only, `*args` and `**kwargs`."""
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    if type(params.star_arg) is cst.Param:
        found.append(params.star_arg)
    if params.star_kwarg is not None:
        found.append(params.star_kwarg)
    return found


def field_factory(call: cst.Call) -> cst.BaseExpression | None:
    """What makes a record field's value: `list` in `field(default_factory=list)` (dataclasses,
    pydantic), `attr.ib(factory=list)`, `attrs.Factory(list)`."""
    name = callee_name(call)
    if name in ("field", "Field", "ib", "attrib"):
        made = argument(call, "default_factory") or argument(call, "factory")
        default = argument(call, "default")
        if made is None and type(default) is cst.Call:
            return field_factory(default)
        return made
    return argument(call, "factory", 0) if name == "Factory" else None


# The `__init__` that a dataclass (or attrs, pydantic) generates: where its fields are assigned.
_GENERATED_INIT = cst.FunctionDef(cst.Name("__init__"), cst.Parameters(), cst.IndentedBlock([]))


_CONTAINER_DISPLAYS = frozenset([cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp])


def makes_container(value: cst.BaseExpression) -> bool:
    """`[]`, `{}`, `set()`, `defaultdict(list)`: a new list, dict or set, which only grows."""
    if type(value) in _CONTAINER_DISPLAYS:
        return True
    if type(value) is not cst.Call:
        return False
    name = callee_name(value)
    if name == "deque":
        return argument(value, "maxlen", 1) is None
    return name in ("list", "dict", "set", "defaultdict", "OrderedDict", "Counter")


def _makes_new_tensor(value: cst.BaseExpression) -> bool:
    """`torch.zeros(n)`, `torch.zeros(1).repeat(b, n)`, `Variable(inputs.data.new(b, t).zero_())`."""
    while type(value) is cst.Call:
        name = callee_name(value)
        if name in _NEW_TENSORS:
            return True
        if name == "Variable" and value.args:  # PyTorch < 0.4 wraps tensors; the wrapper adds no history
            value = value.args[0].value
            continue
        if type(value.func) is not cst.Attribute:
            return False
        value = value.func.value
    return False


def _empty_container(value: cst.BaseExpression | None, slot: cst.Subscript) -> bool:
    """`self.outputs[key] = []`: a slot given an empty container, which empties what was kept there;
    not `self.states[key] = (h, c)`, which adds an entry."""
    filled = isinstance(value, (cst.List, cst.Dict, cst.Tuple, cst.Set)) and bool(value.elements)
    return not filled and resets_container(value, slot)


def resets_container(value: cst.BaseExpression | None, target: cst.BaseExpression) -> bool:
    """`x = []`, `x = dict()`, `x = x[-100:]`: an assignment that empties or bounds a container;
    `x = torch.zeros(n)`, `x = inputs.new(n).zero_()`: one that starts a tensor total afresh."""
    if value is None:
        return False
    if _makes_new_tensor(value):
        # not `x = x.zero_()` nor `x = torch.zeros_like(x)`: the tensor, or the history chained to it, stays
        return not any(same_code(node, target) for node in walk(value))
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)) and any(
        type(e) is cst.StarredElement and same_code(e.value, target) for e in value.elements
    ):
        return False  # `xs = [*xs, h]` keeps every item and adds one
    if isinstance(value, (cst.List, cst.Dict, cst.Tuple, cst.Set)) or is_literal(value):
        return True
    if isinstance(value, (cst.ListComp, cst.DictComp)):
        # `self._buckets = [[] for _ in devices]`, `{k: [] for k in keys}`: fresh empty lists
        return resets_container(value.elt if isinstance(value, cst.ListComp) else value.value, target)
    if type(value) is cst.Call and callee_name(value) in (
        "list",
        "dict",
        "set",
        "defaultdict",
        "OrderedDict",
        "deque",
    ):
        return not value.args or (type(value.func) is cst.Name and value.func.value == "defaultdict")
    if type(value) is cst.Call and (callee_name(value) or "")[:1].isupper():
        # `self._extra_metrics = MetricsTrackingDict({})`, `self.stats = Stats()`: an object of the
        # project's made afresh from nothing, as a container made empty is
        return all(
            isinstance(arg.value, (cst.List, cst.Dict, cst.Tuple)) and not arg.value.elements for arg in value.args
        )
    return type(value) is cst.Subscript and same_code(value.value, target)
