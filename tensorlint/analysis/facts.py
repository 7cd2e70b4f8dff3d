"""What the flow pass records, and what rules ask of it.

`Facts` is a record: a module's index and the events the walk found (`Store`, `Accumulation`,
`AttributeWrite`, `ClosureEscape`, `CudaWork`), the functions' summaries, and the questions that rules and the
walk both ask of a container: how long it lives, and what kind it is. It imports neither the
walk (flow.py) nor the project (project.py): the walk fills it, and the project keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from tensorlint.analysis.index import (
    ClassInfo,
    ModuleIndex,
    Unit,
    attribute_family,
    callees,
    field_factory,
    held_by_self,
    is_plain_base,
    lineage,
    outer_container,
    own_container_items,
    placed,
    reset_only_at_teardown,
    reset_only_when_run_starts,
    reset_only_where_hooks_registered,
    reset_only_while_built,
    self_attribute,
)
from tensorlint.analysis.names import Imports, argument, callee_name, dotted_name, names_in, resets_by_name
from tensorlint.analysis.syntax import (
    called_by_its_name,
    callers_of,
    declared_container,
    only_called,
    target_names,
)
from tensorlint.analysis.values import UNKNOWN, Value, is_input_name, is_torch_module_class
from tensorlint.analysis.walk import walk

if TYPE_CHECKING:  # the type of a field only: project.py holds Facts, so it cannot be imported here
    from tensorlint.analysis.project import Project

# Methods that put their argument into the receiver, and the index of that argument.
STORE_METHODS = {"append": 0, "appendleft": 0, "add": 0, "extend": 0, "insert": 1, "setdefault": 1, "update": 0}


@dataclass(frozen=True, eq=False)
class Loop:
    node: cst.For | cst.While
    reset: frozenset[str]  # names (and `self.x`) assigned afresh on every iteration
    assigned: frozenset[str]  # every name the body assigns, loop variables included
    calls_backward: bool
    # A loop that computes rather than feeds data: over layers, `range`, a tensor, or a dict's
    # items, with no `backward()` or `next()` in its body. What it collects is one graph.
    computes: bool
    # Positive evidence of a training or evaluation loop: `backward()`, `next()`, a DataLoader.
    feeds_data: bool
    carried: frozenset[str]  # names computed from their own previous value: `x = block(x)`
    reads: dict[str, frozenset[str]]  # name -> names its assignments in the body read
    # A loop that generates, without `backward()`: a sequence (`ids = torch.cat([ids, tok])` in
    # `sample`) or an environment's steps (`obs, r, done, info = env.step(a)`). It runs once per
    # token or step, and what it carries from step to step is data, not one unrolled graph; or a
    # sampler's steps, which rebuild a state from the network's output on it (`refined`).
    generates: bool = False
    refined: frozenset[str] = frozenset()  # `x` of `eps = self.unet(x, t)`, ..., `x = a * x0 + d`

    def depends_on_carried(self, expr: cst.BaseExpression, exclude: str | None) -> bool:
        """Whether `expr` is computed, inside this loop, from a loop-carried value."""
        seen: set[str] = set()
        todo = list(names_in(expr))
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(self.reads.get(name, ()))
        return bool((seen & self.carried) - {exclude})


@dataclass(frozen=True, eq=False)
class Store:
    """`value` put into `container` by `node`."""

    node: cst.CSTNode
    unit: Unit
    container: cst.BaseExpression
    value: Value
    value_expr: cst.BaseExpression
    grows: bool  # appends, or writes under a key that changes from call to call
    loops: tuple[Loop, ...]
    via: str | None = None  # when a helper does the storing: "`record` appends it to its `history`"
    fresh: bool = False  # the container was emptied earlier in the same call, on every path to here
    concatenates: bool = False  # `buf = torch.cat([buf, t])`: a tensor buffer that grows by `t`
    reset_in: frozenset[int] = frozenset()  # as for `Accumulation`
    # What the entry is looked up by: the key of `d[k] = v` and `d.setdefault(k, v)`, the member of `s.add(m)`.
    key: Value | None = None
    # A helper of another object keeps it in a list or dict that nothing empties (`Summary.kept_for_the_run`).
    for_the_run: bool = False

    @property
    def reset_this_iteration(self) -> bool:
        return _reset_in_innermost(self.loops, self.reset_in)


@dataclass(frozen=True, eq=False)
class Accumulation:
    """`target += value` or `target = target + value`."""

    node: cst.CSTNode
    unit: Unit
    target: cst.BaseExpression
    value: Value
    value_expr: cst.BaseExpression
    loops: tuple[Loop, ...]
    via: str | None = None  # when a helper's method does it: "`AverageMeter.update` adds it to `self.sum`"
    # The loops (their nodes' ids) in whose iteration the target was assigned afresh earlier, on
    # every path to here (`total = 0` before an inner loop over a batch's sources, in an `if`).
    reset_in: frozenset[int] = frozenset()
    appended: bool = False  # the helper appends it to a list: the tensor itself is kept, not a sum
    # The helper keeps it in a list or dict that nothing empties (`Summary.kept_for_the_run`).
    for_the_run: bool = False

    @property
    def reset_this_iteration(self) -> bool:
        """The target was assigned afresh earlier in the same iteration of the innermost loop."""
        return _reset_in_innermost(self.loops, self.reset_in)


def _reset_in_innermost(loops: tuple[Loop, ...], reset_in: frozenset[int]) -> bool:
    return bool(loops) and id(loops[-1].node) in reset_in


@dataclass(frozen=True, eq=False)
class AttributeWrite:
    """`owner.attr = value` that replaces what the attribute held (neither an accumulation nor a
    concatenation): the attribute keeps the value until the next write."""

    node: cst.CSTNode
    unit: Unit
    target: cst.Attribute
    value: Value
    value_expr: cst.BaseExpression
    loops: tuple[Loop, ...]


@dataclass(frozen=True, eq=False)
class Collected:
    """A comprehension over a loader's batches whose every element carries a graph, kept whole:
    `[criterion(model(x), y) for x, y in val_loader]`, `sum(loss(b) for b in batches)`."""

    node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp
    unit: Unit
    into: frozenset[str]  # the names the statement around it assigns (`losses = [...]`)


@dataclass(frozen=True)
class Summary:
    """What a function of the module does with its arguments, computed once and used at each call.

    Positions count the arguments a caller passes (a method's `self` is not one).
    """

    keeps: dict[int, tuple[str, bool]]  # argument -> (where it is kept, whether appended): ("self.sum", False)
    appends_into: dict[int, int]  # argument -> the argument (a container) it is appended to
    returns_plain: Value  # the result, for arguments of unknown value
    returns_given_graph: Value  # the result when the arguments carry a graph
    # When every `return` gives a tuple of the same length: each position's value, so that
    # `x, pad = helper(x)` tells the tensor from the int.
    elements_plain: tuple[Value, ...] | None = None
    elements_given_graph: tuple[Value, ...] | None = None
    # argument -> (container argument, key argument): `container[key] = value`; whether that adds an
    # entry depends on the key the caller passes.
    stores_under_key: dict[int, tuple[int, int]] = field(default_factory=dict)
    # Arguments kept as they are (`errors.append(e)`, `self.bad.append((path, e))`), not values
    # computed from them: what a caught exception needs to be kept with its traceback.
    kept_as_is: frozenset[int] = frozenset()
    # Statements that act only on the arguments (`owner.buf = value`, `container[key] += value`,
    # `meter.update(value)`, `self._cache[key] = value`), by parameter name: replayed at each call
    # with the caller's arguments (and the object a method is called on), so that what a helper
    # does to them is judged as if written at the call.
    forwarded: tuple[cst.BaseSmallStatement, ...] = ()
    params: tuple[str, ...] = ()  # the names the forwarded statements use, by argument position
    # Arguments appended to a list or dict of the object (or a global) that nothing ever empties:
    # a device tensor handed over is kept for the run.
    kept_for_the_run: frozenset[int] = frozenset()
    # Arguments whose copy (`x.detach()`, `x.clone()`) is appended to such a list or dict: the copy
    # has no graph, but a device tensor's copy holds as much device memory (argument -> where).
    copies_kept_for_the_run: dict[int, str] = field(default_factory=dict)
    # Arguments that a lambda or `partial` captures where it outlives the call (`self._pending.append(
    # lambda: log(tag, float(value)))`): argument -> (how it is kept, whether that is ever emptied).
    captured_kept: dict[int, tuple[str, bool]] = field(default_factory=dict)
    # Where a return runs only for some values of a flag parameter (`if return_images: return
    # loss, images`): each return's flags and value, walked plain and given a graph; a call that
    # passes no flag, or literals, reads only the returns its flags reach (`Flagged`). Empty when
    # no return is under a flag.
    flagged_plain: tuple[Flagged, ...] = ()
    flagged_given_graph: tuple[Flagged, ...] = ()


@dataclass(frozen=True)
class Flagged:
    """One `return` of a function: the flags it runs under (parameter, value) and what it gives."""

    flags: frozenset[tuple[str, bool]]
    value: Value
    elements: tuple[Value, ...] | None  # each position, for a tuple display


NO_SUMMARY = Summary({}, {}, UNKNOWN, UNKNOWN)


@dataclass(frozen=True, eq=False)
class ClosureEscape:
    node: cst.CSTNode  # the lambda or def
    unit: Unit
    captured: tuple[str, ...]
    how: str  # "returned", "stored in `self.fn`", ...
    # A hook on a tensor that captures what holds that tensor: a reference cycle (the names: the
    # tensor, and the expression that holds it).
    cycle: tuple[str, str] | None = None
    local_container: str | None = None  # stored in this function's own list or dict, by name
    local_class: str | None = None  # a method of a class the function defines: kept by the class's cycles
    helper: str | None = None  # a call handing the tensor to another module's function that captures it
    lifetime: str | None = None  # of the container holding it (`Facts.container_kind`), where it is one
    managed: bool = False  # that container is emptied somewhere (a flush)


@dataclass(frozen=True, eq=False)
class CudaWork:
    node: cst.Call
    unit: Unit
    what: str  # "`.cuda()`", "a CUDA `device=`", ...
    device: cst.Arg | None = None  # the argument that names CUDA, in `.to(dev)` and `device=dev`


@dataclass(eq=False)
class Facts:
    index: ModuleIndex
    stores: list[Store] = field(default_factory=list)
    accumulations: list[Accumulation] = field(default_factory=list)
    attribute_writes: list[AttributeWrite] = field(default_factory=list)
    collected: list[Collected] = field(default_factory=list)  # comprehensions over batches, with graphs
    data_comprehensions: dict[int, set[int]] = field(
        default_factory=dict
    )  # id(unit) -> its comprehensions over batches
    # What a LightningModule's `training_step` returns besides `loss` when the class defines
    # `training_epoch_end`: Lightning (before 2.0) keeps every step's outputs until the epoch ends.
    epoch_outputs: list[Store] = field(default_factory=list)
    escapes: list[ClosureEscape] = field(default_factory=list)
    cuda_work: list[CudaWork] = field(default_factory=list)
    final_env: dict[int, dict[str, Value]] = field(default_factory=dict)  # id(unit) -> names at its end
    names_before_loop: dict[int, dict[str, Value]] = field(default_factory=dict)  # id(loop node) -> names there
    # id(argument expression) -> its value where the call is made (a helper's parameters take it)
    argument_values: dict[int, Value] = field(default_factory=dict)
    summaries: dict[int, Summary] = field(default_factory=dict)  # id(unit) -> summary (flow.summary fills it)
    returned: dict[int, set[str]] = field(default_factory=dict)  # id(unit) -> names its returns read
    graph_loops: set[int] = field(default_factory=set)  # id(loop node): loops whose body makes a new graph
    # id(nested function) -> the loops of its parent around the call of it, whether gradients are
    # on there, and the parent: a step function the loop calls (`def _step(x): outs.append(net(x))`)
    # runs in them.
    loops_at_call: dict[int, tuple[tuple[Loop, ...], bool, Unit]] = field(default_factory=dict)
    step_functions: set[int] = field(default_factory=set)  # id(nested function) called so
    # id(unit) -> containers emptied on every path through it (before or after what it stores)
    reset_in_call: dict[int, frozenset[str]] = field(default_factory=dict)
    # id(nested function) -> at each call of it by its parent, the names the parent made afresh before it
    fresh_at_calls: dict[int, list[frozenset[str]]] = field(default_factory=dict)
    # id(call of a method of `self`) -> the attributes its caller set afresh before it (`_Walker.rebound`)
    rebound_at_calls: dict[int, frozenset[str]] = field(default_factory=dict)
    # Units that only set attributes, left unwalked until `names_at_end` or `resets` asks for
    # one: `walk_later` walks it then (flow.analyze sets both).
    deferred: dict[int, Unit] = field(default_factory=dict)
    walk_later: Callable[[Facts, Unit], None] | None = None
    # A class's bases that other modules of the project define, with their modules' facts, nearest
    # first (flow.analyze sets it: reading a module means analysing it).
    bases_elsewhere: Callable[[Facts, ClassInfo], Iterator[tuple[Facts, ClassInfo]]] | None = None
    attribute_cache: dict[tuple[int, str], Value] = field(default_factory=dict)
    # id(unit) of the units the flow pass will walk and has not started: what they bind is not
    # known yet (flow.attribute_value walks one ahead for the attributes it sets).
    walks_pending: set[int] = field(default_factory=set)
    path: Path | None = None  # the file, when there is one: imports resolve from it
    project: Project | None = None  # the other modules of the project, loaded on demand
    # `utils.AverageMeter` -> its module's Facts and class: classes of instances made here
    imported_classes: dict[str, tuple[Facts, ClassInfo]] = field(default_factory=dict)

    def loop_owner(self, unit: Unit, loop: Loop) -> Unit:
        """The unit whose code holds the loop: the parent, for a step function that it calls there."""
        called_in = self.loops_at_call.get(id(unit))
        return called_in[2] if called_in is not None and loop in called_in[0] else unit

    @staticmethod
    def made_at_each_call(unit: Unit, name: str) -> bool:
        """Whether `name` is the function's own: bound there, not a parameter (the caller's object)
        nor declared `global` or `nonlocal`; a call of it makes the name afresh."""
        return _binding_unit(unit, name) is unit and all(p.name.value != name for p in unit.params)

    def names_at_end(self, unit: Unit) -> dict[str, Value] | None:
        """The names bound at the end of the unit's walk; None for a unit not walked (yet)."""
        self._walk_if_deferred(unit)
        return self.final_env.get(id(unit))

    def resets(self, unit: Unit) -> frozenset[str]:
        """The containers the unit empties on every path through it."""
        self._walk_if_deferred(unit)
        return self.reset_in_call.get(id(unit), frozenset())

    def _walk_if_deferred(self, unit: Unit) -> None:
        if self.deferred and self.walk_later is not None:
            deferred = self.deferred.pop(id(unit), None)
            if deferred is not None:
                self.walk_later(self, deferred)

    def class_of(self, instance: str) -> tuple[Facts, ClassInfo] | None:
        cls = self.index.classes.get(instance)
        return (self, cls) if cls is not None else self.imported_classes.get(instance)

    @property
    def imports(self) -> Imports:
        return self.index.imports

    def is_list(self, unit: Unit, container: cst.BaseExpression) -> bool:
        """Whether every assignment makes the container a list: `xs[i] = v` then replaces, never adds."""
        values = _assigned_values(self, unit, container)
        if type(container) is cst.Subscript:  # `self.buffers["inputs"][i] = x`: a dict of lists
            tables = _assigned_values(self, unit, container.value)
            values = [e.value for t in tables if type(t) is cst.Dict for e in t.elements if type(e) is cst.DictElement]
            if not all(type(t) is cst.Dict for t in tables):
                return False
        return bool(values) and all(_kind(self.imports, v) == "list" for v in values)

    def slots_by_index(self, unit: Unit, container: cst.BaseExpression) -> bool:
        """Whether every assignment makes the container a dict with an entry for each index of a
        range (`self._state = {i: init_fn() for i in range(env_num)}`): an array of slots, where
        `d[i] = v` replaces an entry, as in a list."""
        values = _assigned_values(self, unit, container)
        return bool(values) and all(
            type(v) is cst.DictComp
            and type(v.key) is cst.Name
            and type(v.for_in.target) is cst.Name
            and v.key.value == v.for_in.target.value
            and v.for_in.inner_for_in is None
            and not v.for_in.ifs
            and type(v.for_in.iter) is cst.Call
            and dotted_name(v.for_in.iter.func) == "range"
            for v in values
        )

    def is_numpy_array(self, unit: Unit, container: cst.BaseExpression) -> bool:
        """Whether every assignment makes the container a NumPy array (`np.zeros(n)`)."""
        values = _assigned_values(self, unit, container)
        return bool(values) and all(_kind(self.imports, v) == "numpy" for v in values)

    def preallocated(self, unit: Unit, container: cst.BaseExpression) -> bool:
        """Whether every assignment makes the container a list of placeholders, one slot per step to
        come (`history = [None] * steps`): writing a new slot each step keeps every value."""
        values = _assigned_values(self, unit, container)
        return bool(values) and all(
            type(v) is cst.BinaryOperation and type(v.operator) is cst.Multiply and type(v.left) is cst.List
            for v in values
        )

    def _global_handed_out(self, value: cst.BaseExpression) -> bool:
        """`get_event_storage()`: a call of a function of the module that returns a global, or an
        item of one: the object outlives the caller."""
        if not (type(value) is cst.Call and type(value.func) is cst.Name):
            return False
        function = self.index.module_unit.defs.get(value.func.value)
        return function is not None and type(function.node) is cst.FunctionDef and _returns_a_global(function)

    def container_kind(self, unit: Unit, container: cst.BaseExpression) -> tuple[str, str | None]:
        """(lifetime, kind) of a container expression.

        lifetime: "attribute", "global", "closure", "argument" (a container that the loop calling
        the function made before it) or "local"; kind: "list", "dict", "set",
        "bounded", "tensor" or None when unknown.
        """
        expr = container
        while type(expr) is cst.Subscript:
            expr = expr.value  # history[epoch].append(...) grows `history`
        attribute = held_by_self(unit, container)  # (`self[key]` in a dict's subclass: as long-lived as it)
        if attribute is not None:
            assert unit.cls is not None
            classes = attribute_family(self.index.classes, unit.cls, attribute)
            managed = (
                any(attribute in cls.managed for cls in classes)
                or attribute in self.index.foreign_managed
                or self._emptied_by_another_module(classes, attribute)
            )
            if managed and not (
                reset_only_when_run_starts(self.index, unit.cls, attribute)
                or reset_only_at_teardown(self.index, unit.cls, attribute)
                or reset_only_where_hooks_registered(self.index, unit.cls, attribute)
                or reset_only_while_built(
                    self.index,
                    unit.cls,
                    attribute,
                    private=True,
                    uncalled=self._resets_nobody_calls(unit.cls, attribute),
                )
            ):
                return "attribute", "managed"
            if not managed and self._emptied_by_a_base_elsewhere(unit.cls, attribute):
                return "attribute", "managed"
            values = [expr for cls in classes for expr, _ in cls.attribute_values.get(attribute, [])]
            return "attribute", _kind_of(self.imports, values)
        if type(expr) is cst.Attribute and type(expr.value) is cst.Attribute:
            # `self.meter.sum`, `self.owner.cache`: state of an object that an attribute keeps, as
            # long-lived as that one; what it is, by what the module assigns to that attribute name.
            lifetime, _ = self.container_kind(unit, expr.value)
            if lifetime not in ("attribute", "global"):
                return "local", None
            return lifetime, self._attribute_kind_anywhere(expr.attr.value)
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            # `module.outputs` in a hook: an attribute of an object that outlives the call.
            owner = _binding_unit(unit, expr.value.value)
            parameter = expr.value.value in {p.name.value for p in unit.params}
            if owner is unit and parameter and is_input_name(expr.value.value) and _returns(unit, expr.value.value):
                # `batch.x = layer(batch.x); return batch` in `forward(self, batch)`: the call's own
                # input, which carries its output back to the caller. (One that is not returned may
                # be the same object every call: a full-batch graph.)
                return "local", None
            if owner is not unit or parameter:
                values = self.index.foreign_attributes.get(expr.attr.value, [])
                return "attribute", _kind_of(self.imports, values)
            held = kept_object(unit, expr.value.value)
            if held is not None and (lifetime := self.container_kind(unit, held)[0]) != "local":
                # `storage = self.storage`, `for backend in self.backends:`: the state of an object
                # the instance keeps, as long-lived as in `self.storage._history`
                return lifetime, self._attribute_kind_anywhere(expr.attr.value)
            values = unit.bindings.get(expr.value.value, [])
            if values and all(self._global_handed_out(value) for value in values):
                # `storage = get_event_storage()`, which returns `_CURRENT_STORAGE_STACK[-1]`
                return "global", self._attribute_kind_anywhere(expr.attr.value)
        if type(expr) is cst.Name:
            name = expr.value
            owner = _binding_unit(unit, name)
            if owner is None or owner is self.index.module_unit:
                if name in self.index.module_unit.managed_globals:
                    return "global", "managed"
                return "global", _kind_of(self.imports, self.index.module_unit.bindings.get(name, []))
            if name in owner.bound_containers:
                # A parameter bound when a hook was registered: kept by the hook, as long-lived as it.
                registering, bound = owner.bound_containers[name]
                lifetime, kind = self.container_kind(registering, bound)
                # What the registration passes on (its own parameter) the hook's annotation may name:
                # `store: dict[str, list[Tensor]]`.
                kind = kind or declared_container(self.index, owner, expr)
                if lifetime != "local":
                    return lifetime, kind
                return "closure", "managed" if registering.removes_hooks else kind
            if owner is unit and name in unit.given_containers:
                # A container the loop that calls this function made before it: it outlives the call.
                caller, passed = unit.given_containers[name]
                lifetime, kind = self.container_kind(caller, cst.Name(passed))
                return ("argument" if lifetime == "local" else lifetime), kind
            values = owner.bindings.get(name, [])
            aliased = _alias_of_long_lived(self, owner, values)
            if aliased is not None:
                return aliased
            if owner is not unit and self._made_for_each_call(unit, owner, name):
                return "local", _kind_of(self.imports, values)
            if name in owner.managed_globals or (owner is not unit and owner.removes_hooks):
                # Emptied in its function, or filled by hooks that function removes again.
                return ("closure" if owner is not unit else "local"), "managed"
            return ("closure" if owner is not unit else "local"), _kind_of(self.imports, values)
        return "local", None

    def _made_for_each_call(self, unit: Unit, owner: Unit, name: str) -> bool:
        """A container of the enclosing function that it makes afresh before each call of the nested
        one, which it only calls (`matches = []`, then `add_matches(...)` in `forward`): what the
        nested function keeps there lives as long as that one call of the enclosing function."""
        calls = self.fresh_at_calls.get(id(unit))
        if unit.parent is not owner or not calls or not all(name in fresh for fresh in calls):
            return False
        if handed_on(owner, name):
            return False
        node = unit.node
        assert type(node) is cst.FunctionDef  # only functions are called by name
        return only_called(owner.node, node.name)

    def runs_only_while_built(self, unit: Unit, depth: int = 2) -> bool:
        """A method that only its class's `__init__` calls, directly or through a method that only
        `__init__` calls (`self._create_skills(...)` filling `self._skills` once), and that no
        other module calls by its name: it runs once per object, not once per step. Without a
        project to read, only a private method (`_create_skills`) is taken for the class's own."""
        if depth == 0 or not unit.is_method or unit.cls is None or not called_by_its_name(unit):
            return False
        callers = callers_of(self.index, unit.name)
        if not callers or not all(
            caller.cls is unit.cls and (caller.name == "__init__" or self.runs_only_while_built(caller, depth - 1))
            for caller in callers
        ):
            return False
        elsewhere = self.project.called_elsewhere(self.path, unit.name) if self.project and self.path else None
        return elsewhere is False or (elsewhere is None and unit.name.startswith("_"))

    def _resets_nobody_calls(self, cls: ClassInfo, attribute: str) -> frozenset[str]:
        """The public methods emptying `self.<attribute>` that no code calls but the class's own
        methods (a meter's `reset()` that only its `__init__` calls), where the project shows all
        the code there is: for a class this file builds, with no base from elsewhere but torch's
        modules (a framework calls a `Metric`'s or a callback's `reset`, a LightningModule's
        `on_train_epoch_end`)."""
        family = lineage(self.index.classes, cls)
        if self.project is None or self.path is None or cls.name not in self.index.named_calls:
            return frozenset()
        if any(
            base
            and base not in self.index.classes
            and not (is_plain_base(base) or (is_torch_module_class(base) and base.startswith("torch.")))
            for c in family
            for base in c.base_names
        ):
            return frozenset()  # (Lightning, transformers: a framework calls their hooks by name)
        public = {
            unit.name for c in family for unit in c.managed_in.get(attribute, []) if not unit.name.startswith("_")
        }
        return frozenset(
            name
            for name in public
            if all(any(caller.cls is c for c in family) for caller in callers_of(self.index, name))
            and self.project.called_elsewhere(self.path, name) is False
        )

    def made_afresh_by_a_reset(self, cls: ClassInfo) -> bool:
        """Whether the code keeps objects of the class on another object and makes them afresh in a
        reset (`self.history = HistoryBuffer(n)` in an environment's `reset()`, in this module or
        another of the project): what one of them keeps lasts an episode."""
        made_here = any(
            resets_by_name(unit.name)
            and type(value) is cst.Call
            and (dotted_name(value.func) or "").split(".")[-1] == cls.name
            for holder in self.index.classes.values()
            for pairs in holder.attribute_values.values()
            for value, unit in pairs
        )
        if made_here:
            return True
        return (
            self.project is not None
            and self.path is not None
            and self.project.made_afresh_elsewhere(self.path, cls.name)
        )

    def _emptied_by_another_module(self, classes: list[ClassInfo], attribute: str) -> bool:
        """`self.mac_unit.history = []` in the module of the model that holds the unit: emptied by
        its owner on each call, as a parent in this module would (`foreign_managed`)."""
        if self.project is None or self.path is None:
            return False
        return any(self.project.emptied_elsewhere(self.path, attribute, cls.name) for cls in classes)

    def _emptied_by_a_base_elsewhere(self, cls: ClassInfo, attribute: str) -> bool:
        """`self.fake_results.clear()` in `evaluate` of a base class that another module defines:
        emptied on each evaluation, as a base of this module would; not by a method that a nearer
        class overrides without calling it (`super().evaluate()`), nor only while the object is
        built (`__init__` calling a `reset_state()` that nothing else calls)."""
        if self.bases_elsewhere is None:
            return False
        bases = list(self.bases_elsewhere(self, cls))
        if not any(attribute in base.managed_in for _, base in bases):
            return False  # (most attributes: the walks over the class's own methods below are not needed)
        own = lineage(self.index.classes, cls)
        overridden = _overriding(own)
        called_here = {name for c in own for method in c.methods.values() for name in _called_on_self(method)}
        for there, base in bases:
            resets = [unit for unit in base.managed_in.get(attribute, []) if unit.name not in overridden]
            if resets and any(unit.name in called_here for unit in resets):
                return True  # `self.reset_state()` in the subclass's `on_epoch_end`
            if resets and not (
                reset_only_when_run_starts(there.index, base, attribute)
                or reset_only_while_built(there.index, base, attribute, private=False)
            ):
                return True
            overridden |= _overriding([base])
        return False

    def _attribute_kind_anywhere(self, attribute: str) -> str | None:
        """The kind of an attribute of an object whose class is not known here: from every
        assignment to that attribute name in the module (`self.cache = []` in any class)."""
        classes = self.index.classes.values()
        if attribute in self.index.foreign_managed or any(attribute in cls.managed for cls in classes):
            return "managed"
        values = [v for cls in classes for v, _ in cls.attribute_values.get(attribute, [])]
        return _kind_of(self.imports, [*values, *self.index.foreign_attributes.get(attribute, [])])


def _overriding(classes: list[ClassInfo]) -> set[str]:
    """The methods these classes define without calling the one they override (`super().evaluate()`,
    `BaseSegmenter.evaluate(self)`)."""
    return {
        name
        for cls in classes
        for name, method in cls.methods.items()
        if not any(
            type(call) is cst.Call
            and type(call.func) is cst.Attribute
            and call.func.attr.value == name
            and (
                (type(call.func.value) is cst.Call and dotted_name(call.func.value.func) == "super")
                or (bool(call.args) and type(call.args[0].value) is cst.Name and call.args[0].value.value == "self")
            )
            for call in walk(method)
        )
    }


def _called_on_self(method: cst.FunctionDef) -> set[str]:
    """The methods a method other than `__init__` calls on `self` (`self.reset_state()`)."""
    if method.name.value == "__init__":
        return set()
    return {
        call.func.attr.value
        for call in walk(method)
        if type(call) is cst.Call
        and type(call.func) is cst.Attribute
        and type(call.func.value) is cst.Name
        and call.func.value.value == "self"
    }


def handed_on(unit: Unit, name: str) -> bool:
    """Whether the function returns or yields the container itself, or binds it to another name
    (`return outs`, `return outs, n`, `self.kept = outs`): it then outlives the call. (Not
    `torch.cat(outs)`, a new tensor.)"""
    handed = [node.value for node, _ in placed(unit, cst.Return)]
    handed += [node.value for node, _ in placed(unit, cst.Yield) if not isinstance(node.value, cst.From)]
    handed += [node.value for node, _ in placed(unit, cst.Assign)]
    for value in handed:
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        if any(type(item) is cst.Name and item.value == name for item in items):
            return True
    return False


def _returns(unit: Unit, name: str) -> bool:
    """Whether the function returns the name itself (`return batch`)."""
    return any(type(node.value) is cst.Name and node.value.value == name for node, _ in placed(unit, cst.Return))


def _assigned_values(facts: Facts, unit: Unit, container: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What the code assigns to a container expression: `self.x = ...` in the class, `x = ...` in scope."""
    attribute = self_attribute(unit, container)
    if attribute is not None and unit.cls is not None:
        return [v for cls in lineage(facts.index.classes, unit.cls) for v, _ in cls.attribute_values.get(attribute, [])]
    if type(container) is cst.Name:
        owner = _binding_unit(unit, container.value) or facts.index.module_unit
        return owner.bindings.get(container.value, [])
    if type(container) is cst.Attribute:
        # `frame.ids`, of an object the code is handed: what the module assigns to that attribute
        # of the objects it is handed (`frame.ids = [0] * n`), not of `self` in some class.
        return facts.index.foreign_attributes.get(container.attr.value, [])
    return []


def names_reaching(unit: Unit, seeds: set[str]) -> set[str]:
    """`seeds` and the names whose values flow into them in the unit's own code: assigned to
    them (`result = f(x)`), put into them (`result.append(x)`), or iterated into them
    (`for x in embeds: result.append(x)`)."""
    reached = set(seeds)
    if not reached:
        return reached
    flows: list[tuple[set[str], set[str]]] = []  # (names written, names whose values they take)
    for assign, _ in placed(unit, cst.Assign):
        written = {name for target in assign.targets for name in names_in(target.target)}
        flows.append((written, names_in(assign.value) - _only_called(assign.value)))
    for loop, _ in placed(unit, cst.For):
        flows.append((_given_values(loop), names_in(loop.iter)))
    for augmented, _ in placed(unit, cst.AugAssign):
        flows.append((names_in(augmented.target), names_in(augmented.value)))  # `result += [x]`
    for call, _ in placed(unit, cst.Call):
        if callee_name(call) in STORE_METHODS and type(call.func) is cst.Attribute:
            flows.append((names_in(call.func.value), {n for arg in call.args for n in names_in(arg.value)}))
    return flowing_into(flows, reached)


def _given_values(loop: cst.For) -> set[str]:
    """The loop's names that hold what it iterates: of `for name, fn in fns.items()`, `fn` only
    (the key is a string of the dict, not one of its values)."""
    target, iterated = loop.target, loop.iter
    if (
        type(target) is cst.Tuple
        and len(target.elements) == 2
        and type(iterated) is cst.Call
        and callee_name(iterated) == "items"
        and not iterated.args
    ):
        return names_in(target.elements[1].value)
    return names_in(target)


def _only_called(expr: cst.BaseExpression) -> set[str]:
    """The names an expression only calls (`loss = loss_fn()`): the result is what the function
    returns, which does not hold the function."""
    calls = [node for node in (expr, *walk(expr)) if type(node) is cst.Call]
    called = {call.func.value for call in calls if type(call.func) is cst.Name}
    return called - {name for call in calls for arg in call.args for name in names_in(arg.value)}


def flowing_into(flows: Iterable[tuple[set[str], set[str]]], seeds: set[str]) -> set[str]:
    """`seeds` and every name whose value flows into them through `flows`: (names written, names
    whose values they take) pairs, followed to a fixed point."""
    reached = set(seeds)
    flows = list(flows)
    changed = True
    while changed:
        changed = False
        for written, read in flows:
            if written & reached and not read <= reached:
                reached |= read
                changed = True
    return reached


def bounded_per_call(facts: Facts, store: Store) -> bool:
    """Whether the call that stores also empties the container on every path: one call's worth.
    For a helper of a per-step method, whether every step that calls it empties the container in
    the same call, itself or through a method it calls (`_maybe_compute_loss` appends a
    micro-batch's loss, the step's `_update_losses` hands them over and clears the list)."""
    root = root_name(store.container)
    if store.fresh or root in facts.resets(store.unit):
        return True
    owner = store.unit.self_name
    if root is None or owner is None or not root.startswith(f"{owner}."):
        return False  # only the object's own state is the same container in its caller
    callers = {id(method): method for method in (_method_around(caller) for _, caller in store.unit.call_sites)}
    return bool(callers) and all(
        caller.self_name == owner and _empties(facts, caller, root) for caller in callers.values()
    )


def _method_around(unit: Unit) -> Unit:
    """The method that defines a nested function (`_perform_action` nested in a step method calls
    the helper; the method empties what the helper fills), or the unit itself."""
    current: Unit | None = unit
    while current is not None and not current.is_method:
        current = current.parent
    return current or unit


def _empties(facts: Facts, unit: Unit, root: str) -> bool:
    """Whether every call of `unit` empties `root`: itself, or through a function it calls on
    every path (not in a loop, a handler or an `if` that may not run)."""
    if root in facts.resets(unit):
        return True
    always = {id(node) for statement in _every_path(unit.node) for node in walk(statement)}
    return any(id(call) in always and root in facts.resets(callee) for call, callee in callees(facts.index, unit))


def _every_path(node: cst.CSTNode) -> Iterator[cst.SimpleStatementLine]:
    """The simple statements of a function that run on every call: its top level, and the bodies
    of `with`, `try` (not its handlers) and `if True:` there."""
    body = getattr(node, "body", None)
    for statement in body.body if type(body) is cst.IndentedBlock else []:
        if type(statement) is cst.SimpleStatementLine:
            yield statement
        elif isinstance(statement, (cst.With, cst.Try)) or (
            type(statement) is cst.If and type(statement.test) is cst.Name and statement.test.value == "True"
        ):
            yield from _every_path(statement)


def tensor_keyed(facts: Facts, store: Store) -> str | None:
    """How a dict or set that gets a tensor as a key or member outlives the call, in words ("an
    attribute", "a global", "a closure's", "a local filled over batches"); None when it does not.

    `Tensor.__hash__` is `id()`: each such store adds an entry. TL015 reports these statements;
    the rules about growing containers leave them to it.
    """
    if store.key is None or not store.key.tensor or not store.grows or store.unit.name == "__init__":
        return None
    if store.key.requires_grad:
        return None  # a parameter (a hook's, handed it): one entry per parameter, as long-lived as the model
    if type(store.container) is cst.Subscript:
        return None  # `sums[key][env_ids] = 0.`: a write into what `sums[key]` holds (a tensor), not into `sums`
    lifetime, kind = facts.container_kind(store.unit, store.container)
    method = callee_name(store.node) if type(store.node) is cst.Call else None
    needs = {"add": "set", "setdefault": "dict"}.get(method or "", kind)
    if kind not in ("dict", "set") or kind != needs:
        return None  # a tensor indexed by a tensor (`mask[idx] = 0`), a meter's `add`, a managed cache
    if lifetime in ("attribute", "global", "closure"):
        return {"attribute": "an attribute", "global": "a global", "closure": "a closure's"}[lifetime]
    if any(loop.feeds_data for loop in store.loops) and not store.reset_this_iteration:
        return "a local filled over batches"
    return None


def _returns_a_global(function: Unit) -> bool:
    """Whether every `return` of a function gives a global or an item of one (`return _STACK[-1]`)."""
    returned = [ret.value for ret, _ in placed(function, cst.Return)]
    return bool(returned) and all(
        value is not None
        and type(held := outer_container(value)) is cst.Name
        and held.value not in function.bindings
        and held.value not in {p.name.value for p in function.params}
        for value in returned
    )


def root_name(expr: cst.BaseExpression) -> str | None:
    """`total` for `total`, `self.stats` for `self.stats["loss"]`: what an accumulator is called."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return dotted_name(expr)


def _binding_unit(unit: Unit, name: str) -> Unit | None:
    current: Unit | None = unit
    while current is not None:
        if name in current.declared_global:
            return None
        if name in current.declared_nonlocal:
            current = current.parent  # `nonlocal total`: bound in an enclosing function
            continue
        if name in current.bindings or any(p.name.value == name for p in current.params):
            return current
        current = current.parent
    return None


def _alias_of_long_lived(facts: Facts, owner: Unit, values: list[cst.BaseExpression]) -> tuple[str, str | None] | None:
    """`cache = self.cache` makes `cache` the attribute's container; `state = self.state[p]` one of
    its items (an optimizer's per-parameter state), as long-lived as it, of a kind not known."""
    for value in values:
        item = value
        defaulted = _set_default(value)
        if defaulted is not None and self_attribute(owner, defaulted[0]) is not None:
            # `bucket = self.acts.setdefault(name, [])`: the list that `self.acts` keeps under `name`
            lifetime, kind = facts.container_kind(owner, defaulted[0])
            return lifetime, "managed" if kind == "managed" else _kind(facts.imports, defaulted[1])
        while type(item) is cst.Subscript and _one_key(item):
            item = item.value
        attribute = self_attribute(owner, item)
        if attribute is not None:
            lifetime, kind = facts.container_kind(owner, item)
            if item is value:
                return lifetime, kind
            if kind in ("dict", "list", "managed") or (kind is None and _inherited(facts, owner, attribute)):
                return lifetime, None
    return None


def _set_default(value: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The container and the default of `d.setdefault(k, default)`."""
    if type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "setdefault":
        return (value.func.value, value.args[1].value) if len(value.args) == 2 else None
    return None


def kept_object(unit: Unit, name: str) -> cst.BaseExpression | None:
    """The attribute of `self` whose object a local name always is (`storage = self.storage`), or
    whose items it is given (`history = self._history[name]`; `for backend in self.backends:`,
    `.values()`, `.items()`)."""
    held = [outer_container(value) for value in unit.bindings.get(name, [])]
    for loop, _ in placed(unit, cst.For):
        if name in target_names(loop.target):
            item, container = own_container_items(loop, unit)
            held.append(container if item == name and container is not None else loop.iter)
    if not held or any(self_attribute(unit, value) is None for value in held):
        return None
    return held[0]


def _inherited(facts: Facts, unit: Unit, attribute: str) -> bool:
    """An attribute the file neither assigns nor defines (an optimizer's `self.state`): a library
    base class's container. (One the file computes, a property or a tensor it builds, is not.)"""
    assert unit.cls is not None
    classes = [*lineage(facts.index.classes, unit.cls), *attribute_family(facts.index.classes, unit.cls, attribute)]
    return not any(attribute in cls.attribute_values or attribute in cls.methods for cls in classes)


def _one_key(expr: cst.Subscript) -> bool:
    """`state[p]`, an item of a container; not `memory[:end, ...]`, a slice (of a tensor: a view)."""
    return len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index


# NumPy arrays made to be written into: an item assigned is converted to a number (a tensor that
# requires grad cannot even be), so they keep no tensor and no graph; not with `dtype=object`.
_NUMPY_ARRAYS = frozenset(
    ["zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "array", "asarray",
     "load", "arange", "linspace", "concatenate", "stack"]
)  # fmt: skip


def _holds_objects(made: cst.Call) -> bool:
    """`np.empty(n, dtype=object)`: an array of references, which keeps the tensors put in it."""
    dtype = argument(made, "dtype")
    return dtype is not None and (dotted_name(dtype) or "").rsplit(".", 1)[-1] in ("object", "object_", "O")


def _kind_of(imports: Imports, values: Sequence[cst.BaseExpression]) -> str | None:
    """What the assignments to a container make it; None when they do not say."""
    kinds = {_kind(imports, v) for v in values}
    kinds.discard(None)
    if not kinds:
        return None
    for kind in ("bounded", "tensor"):  # a bounded or tensor buffer anywhere: no growth to see
        if kind in kinds:
            return kind
    if kinds == {"set"}:
        return "set"
    return "dict" if kinds == {"dict"} else "list" if kinds <= {"list", "dict"} else None


def _kind(imports: Imports, value: cst.BaseExpression) -> str | None:
    if type(value) is cst.IfExp:  # `np.zeros(n) if path is None else np.load(path)`
        kind = _kind(imports, value.body)
        return kind if kind == _kind(imports, value.orelse) else None
    if isinstance(value, (cst.List, cst.ListComp)) or (
        type(value) is cst.BinaryOperation and type(value.left) is cst.List  # [None] * n
    ):
        return "list"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, (cst.Set, cst.SetComp)):
        return "set"
    if type(value) is cst.Call and (made := field_factory(value)) is not None:
        return _kind(imports, made.body if type(made) is cst.Lambda else cst.Call(made))
    if type(value) is cst.Call:
        func = value.func.value if type(value.func) is cst.Subscript else value.func  # defaultdict[str, list](list)
        qualified = imports.qualify(func) or dotted_name(func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if last == "deque":
            bounded = argument(value, "maxlen", 1)
            return (
                "bounded"
                if bounded is not None and not (type(bounded) is cst.Name and bounded.value == "None")
                else "list"
            )
        if last in ("list",):
            return "list"
        if last == "set":
            return "set"
        factory = value.args[0].value if last == "defaultdict" and value.args else None
        if type(factory) is cst.Lambda and _kind(imports, factory.body) == "bounded":
            return "bounded"  # `defaultdict(lambda: deque(maxlen=n))`: a window per key
        if type(factory) is cst.Call and _partial(imports, factory) and _kind(imports, _applied(factory)) == "bounded":
            return "bounded"  # `defaultdict(functools.partial(deque, maxlen=n))`
        if last in ("dict", "defaultdict", "OrderedDict", "Counter"):
            return "dict"
        if qualified.startswith("torch.") or qualified in ("nn.Parameter", "Parameter"):
            return "tensor"
        if qualified.startswith("numpy.") and last in _NUMPY_ARRAYS and not _holds_objects(value):
            return "numpy"
    return None


def _partial(imports: Imports, call: cst.Call) -> bool:
    return (
        bool(call.args) and (imports.qualify(call.func) or dotted_name(call.func) or "").rsplit(".", 1)[-1] == "partial"
    )


def _applied(partial: cst.Call) -> cst.Call:
    """What calling `partial(f, *args, **kwargs)` calls: `f(*args, **kwargs)`."""
    return cst.Call(func=partial.args[0].value, args=partial.args[1:])
