"""The second pass: walk each function in statement order and record what rules judge.

The walker keeps an environment of abstract values (`values.Value`) per name, the grad
mode of the current block, and the loops around the current statement. It records, in the
module's `facts.Facts`:
- `Store`: a value put into a container (`xs.append(v)`, `d[k] = v`, `xs += [v]`);
- `Accumulation`: `acc += v` or `acc = acc + v`;
- `AttributeWrite`: `obj.attr = v` that replaces what the attribute held;
- `ClosureEscape`: a lambda or nested def that captures tensors and outlives the call;
- `CudaWork`: a call that allocates on, or initialises, CUDA.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial, reduce
from pathlib import Path
from typing import cast

import libcst as cst

from tensorlint.analysis.facts import (
    NO_SUMMARY,
    STORE_METHODS,
    Accumulation,
    AttributeWrite,
    ClosureEscape,
    Collected,
    CudaWork,
    Facts,
    Flagged,
    Loop,
    Store,
    Summary,
    kept_object,
    root_name,
)
from tensorlint.analysis.index import (
    GRAPH_GIVEN_METHODS,
    LIGHTNING_STEPS,
    NO_GRAD_STEP_METHODS,
    NOWHERE,
    OWN_ITEMS,
    ClassInfo,
    ModuleIndex,
    Role,
    Unit,
    all_params,
    annotation_words,
    arguments_by_position,
    attribute_family,
    build_index,
    called_from,
    callees,
    constructor_arguments,
    emptied_each,
    expression_words,
    heirs,
    lineage,
    outer_container,
    overrides,
    own_container_items,
    placed,
    qualified_name,
    resets_container,
    resolve_callable,
    runs_per_batch,
    self_attribute,
    single_class,
    steps_once,
)
from tensorlint.analysis.names import (
    Imports,
    argument,
    callee_name,
    class_word,
    class_words,
    dotted_name,
    grad_mode_asked,
    grad_mode_set_by,
    is_literal,
    keyword_bools,
    literal_bool,
    names_data_statistics,
    names_in,
    receiver,
    references,
    string_value,
)
from tensorlint.analysis.project import Project
from tensorlint.analysis.syntax import (
    COMPUTED_COLLECTIONS,
    ITEM_WRAPPERS,
    NoGrad,
    accepts,
    accumulated_operand,
    assign_loop_step_roles,
    called_by_its_name,
    callers_quiet_by_their_calls,
    callers_with_gradients,
    calls_and_yields,
    calls_in,
    calls_under_no_grad,
    carried_names,
    concatenated_operand,
    counts_batches,
    decodes,
    drops_graph,
    element_class,
    enables_gradients,
    entries_replaced,
    fetches_next,
    few_pieces,
    free_names,
    hands_over_data,
    hook_registration,
    iterates_data,
    iterates_examples,
    iterates_loader,
    last_statement,
    list_extension,
    loop_calls,
    names_generation,
    own_nodes,
    parts_run_without_grad,
    pieces_made_here,
    refined_state,
    removes_handles,
    reset_every_iteration,
    runs_in_chunks,
    steps_an_environment,
    target_names,
    through_data,
    value_flows,
)
from tensorlint.analysis.values import (
    CUDA,
    EXCEPTION,
    GRAPH,
    HOST,
    KEYED_ITEMS,
    MODULE,
    PARAMETER,
    PARAMETER_ATTRIBUTES,
    SCALAR,
    TENSOR,
    UNKNOWN,
    Value,
    evaluate,
    is_criterion_name,
    is_data_name,
    is_index_name,
    is_loss_name,
    is_model_name,
    is_torch_module_class,
    moves_to_the_host,
    names_a_count,
    names_a_log,
    names_a_loss_class,
    names_a_loss_value,
    names_integer_field,
    names_text,
    names_the_host,
    number_guard,
    on_the_device,
    passed_through,
    spatial_sizes,
    tensor_guard,
    text_key,
)
from tensorlint.analysis.walk import children, contains, same_code, walk

# Method names that register a callback on their receiver.
REGISTRATIONS = frozenset(
    ["add_done_callback", "add_callback", "connect", "call_soon", "call_later", "add_event_handler"]  # ignite's Engine
)
# torch.cuda functions that neither allocate nor initialise CUDA in a worker.
CUDA_SAFE = frozenset(
    ["manual_seed", "manual_seed_all", "seed", "seed_all", "is_available", "device_count", "is_initialized"]
)
# `torch.cuda.nvtx.range_push()` and the rest mark ranges for a profiler on the host (NVTX): they
# do not initialise CUDA.
CUDA_SAFE_MODULES = ("torch.cuda.nvtx.",)
_PYTHON_SCALAR_ANNOTATIONS = frozenset(["int", "float", "bool", "str", "complex", "Optional", "None"])


def _checks_bfloat16(call: cst.Call) -> bool:
    """`torch.cuda.amp.autocast(dtype=torch.bfloat16)` asks the GPU whether it supports bfloat16,
    which initialises CUDA; otherwise autocast only sets thread-local flags. Measured on an H200
    in forked DataLoader workers after the parent used CUDA: `enabled=False` and the default
    float16 ran without initialising CUDA, bfloat16 raised RuntimeError."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    enabled, dtype = keywords.get("enabled"), keywords.get("dtype")
    if type(enabled) is cst.Name and enabled.value == "False":
        return False
    return dtype is not None and (dotted_name(dtype) or "").endswith(("bfloat16", "bf16"))


def _named_for_no_grad(decorator: cst.BaseExpression, imports: Imports) -> bool:
    """`@smart_inference_mode()`, `@StaticCaptureEvaluateNoGrad(model=model)`: a decorator of
    another package, or of a module the project does not show, named for what it does."""
    func = decorator.func if type(decorator) is cst.Call else decorator
    if (imports.qualify(func) or "").startswith("torch."):
        return False  # torch's own are read by what they are (`inference_mode(False)` enables grad)
    last = (dotted_name(func) or "").rsplit(".", 1)[-1].replace("_", "").lower()
    return "nograd" in last or "inferencemode" in last


class _Walker:
    """Walks one unit's statements; implements `values.Scope` for `evaluate`."""

    def __init__(self, facts: Facts, unit: Unit, arguments: Value | None = None) -> None:
        self.facts = facts
        self.index = facts.index
        self.unit = unit
        self.imports = facts.imports
        self.turns_gradients_on = facts.index.turns_gradients_on
        self.env: dict[str, Value] = {}
        self._entered: set[int] = set()  # context managers being read, by id (`_context_grad_mode`)
        self.grad_enabled = self._grad_enabled_here()
        self.call_values: dict[int, Value] = {}
        self.loops: list[Loop] = []
        self.discarded: cst.BaseExpression | None = None  # the value of the expression statement walked last
        self.arguments = arguments  # when summarising: the value every argument is assumed to have
        self.returns = UNKNOWN  # what the returns give, joined; the first one as it is
        self.has_returned = False
        self.returned_elements: list[Value] | None = None  # per position, while every return is a tuple
        self.returns_other = False  # a return that is not a tuple display of that length
        # When summarising: the flags (`if return_images:`) around the statement, and each return
        # with the flags it runs under (`Summary.flagged_plain`).
        self.flags_now: list[tuple[str, bool]] = []
        self.flagged: list[Flagged] = []
        self.tensor_hooks: list[tuple[cst.CSTNode, str]] = []  # (closure, the local tensor it hooks)
        # Containers emptied earlier in this call on every path here (`self.maps = []`, `.clear()`):
        # what is stored into them now is bounded by one call.
        self.fresh: set[str] = set()
        # Locals that stand for an item of the object's own container, by the container: `buf` after
        # `state = self.state[p]` and `buf = state["momentum_buffer"]` (an in-place write is its).
        self.own_items: dict[str, cst.BaseExpression] = {}
        # Graphs whose features this call owns (DGL's `with g.local_scope():`, `g = g.local_var()`):
        # what it writes into them is undone or dropped when the call ends.
        self.own_graphs: set[str] = set()
        # Attributes of the object this call assigned anew on every path here, from values that do
        # not read them (`self.emb = self.table(ids)`): what is folded into them next is this call's.
        self.rebound: set[str] = set()
        # Per name that `backward()` is called on, the loops around each such call (`_backpropagated_here`).
        self._backward_loops: dict[str, list[tuple[cst.For | cst.While, ...]]] | None = None
        self._assigned_from: dict[str, list[cst.BaseExpression]] | None = None  # see `_computed_from`
        self._looped_step: bool | None = None  # see `_step_called_in_a_loop`
        self.conditions: list[cst.BaseExpression] = []  # the tests of the `if`s around the statement
        # Per enclosing loop, innermost last: names assigned afresh earlier in this iteration on every path.
        self.iteration_fresh: list[set[str]] = []
        # `obj.attr` -> the escape of the closure stored there, and how many `if`s were around it
        self.patched: dict[str, tuple[ClosureEscape, int]] = {}
        self.report_at: cst.CSTNode | None = None  # the call whose helper's statements are replayed
        self.replay_via: str | None = None  # and what its findings say the helper did
        self.replaying = 0
        self.data_comprehensions: set[int] = set()  # ids of comprehensions over batches (see `run`)

    def _grad_enabled_here(self) -> bool:
        """Whether the unit's code runs with gradients on, found once per unit (a unit is walked
        again for its summary and for its names at the end: each walk asks)."""
        known = self.index.grad_enabled.get(id(self.unit))
        if known is None:
            known = not (
                self._decorated_no_grad() or self._called_only_under_no_grad() or self._a_part_run_without_grad()
            )
            self.index.grad_enabled[id(self.unit)] = known
        return known

    # -- values.Scope ------------------------------------------------------------------------

    def lookup(self, name: str) -> Value:
        value = self._lookup(name)
        frozen = value.module and any(name in unit.frozen for unit in _units_around(self.unit))
        if frozen and not self.turns_gradients_on:  # (`model.fc.requires_grad_(True)` thaws a part)
            return replace(value, frozen=True)
        return value

    def _lookup(self, name: str) -> Value:
        unit: Unit | None = self.unit
        env: dict[str, Value] | None = self.env
        # Used as a network here (`model.train()`): a module, and the one the enclosing scope
        # binds where it binds one (`model = Net()`), whose class tells what its `forward` returns.
        evidence = False
        while unit is not None:
            evidence = evidence or name in unit.module_evidence
            if env is not None and name in env:
                value = env[name]
                if unit.parent is None and len(put := self.index.instances_put_in.get(name, ())) == 1:
                    # a global list of the objects of one class (`_STACK[-1]`): it stands for them
                    return Value(instance=next(iter(put)))
                return MODULE if evidence and not value.tensor and not value.module else value
            if name == unit.self_name and unit.cls is not None:
                return Value(module=unit.cls.is_module or evidence, instance=unit.cls.name)
            unit = unit.parent
            env = self.facts.names_at_end(unit) if unit is not None else None
        return MODULE if evidence else UNKNOWN

    def attribute_of_self(self, expr: cst.BaseExpression) -> Value | None:
        key = self._path_key(expr)
        assigned_here = self.env.get(key) if key is not None else None
        if assigned_here is not None:
            return assigned_here  # `with torch.no_grad(): self.out = net(x)`, then `return self.out`
        attribute = self_attribute(self.unit, expr)
        if attribute is None:
            return None
        assert self.unit.cls is not None
        return attribute_value(self.facts, self.unit.cls, attribute)

    def items_of_attribute(self, container: cst.BaseExpression) -> Value | None:
        if type(container) is not cst.Attribute:
            return None
        attribute = self_attribute(self.unit, container)
        if attribute is not None:
            assert self.unit.cls is not None
            return items_value(self.facts, self.unit.cls, attribute)
        owner = evaluate(container.value, self)  # `engine.state["loss"]`, of a class the code shows
        known = self.facts.class_of(owner.instance) if owner.instance else None
        return items_value(*known, container.attr.value) if known is not None else None

    def attribute_of_instance(self, owner: Value, name: str) -> Value | None:
        known = self.facts.class_of(owner.instance) if owner.instance else None
        if known is None:
            return None
        facts, cls = known
        assigned = any(name in c.attribute_values for c in lineage(facts.index.classes, cls))
        if not (assigned or (cls.is_record and name in facts.index.foreign_writes)):
            return None
        return attribute_value(facts, cls, name)

    def engine_output(self) -> Value | None:
        """The engines of the handler this code is in (or nested in); of the file, elsewhere (a
        helper the handler calls)."""
        unit: Unit | None = self.unit
        while unit is not None and id(unit) not in self.index.handler_engines:
            unit = unit.parent
        engines = self.index.handler_engines[id(unit)] if unit is not None else self.index.engines
        returned = [
            summary_of(self.facts, process).returns_plain
            for call, maker in engines
            for process, _, _ in resolve_callable(self.index, call.args[0].value, maker)
        ]
        return _joined(returned) if returned else None

    def sets_attribute(self, name: str) -> bool:
        return name in self.index.foreign_attributes or any(
            name in cls.attribute_values for cls in self.index.classes.values()
        )

    def item_of_instance(self, owner: Value) -> Value | None:
        known = self.facts.class_of(owner.instance) if owner.instance else None
        if known is None:
            return None
        facts, cls = known
        made = _item_instance(facts, lineage(facts.index.classes, cls), OWN_ITEMS)
        return Value(instance=made) if made is not None else None

    def is_local_module_class(self, name: str) -> bool:
        cls = self.index.classes.get(name)
        return cls is not None and cls.is_module

    def is_record_type(self, name: str) -> bool:
        made = self.index.module_unit.bindings.get(name, [])
        return bool(made) and name not in self.unit.bindings and all(_makes_a_record_type(value) for value in made)

    def is_local_function(self, name: str) -> bool:
        found = self.unit.lookup_def(name)
        return found is not None and type(found.node) is cst.FunctionDef

    def option_defaults(self) -> Mapping[str, cst.BaseExpression]:
        return self.index.option_defaults

    def local_instance(self, name: str, args: list[Value]) -> Value | None:
        cls = self.index.classes.get(name)
        if cls is None and (default := self._class_default(name)) is not None:
            return self.local_instance(default, args)  # `ac = actor_critic(...)`, `actor_critic=core.MLPActorCritic`
        if cls is None and name in BUILTIN_NAMES:
            return None  # `len(x)`, `dim: int`: no module of the project is read for them
        if cls is None:
            imported = resolve_import(self.facts, name)
            cls = imported[0].index.classes.get(imported[1]) if imported else None
            if imported is None or cls is None:
                return None
            name = self.imports.origin(name) or name  # the class of another module, by its origin
            self.facts.imported_classes[name] = (imported[0], cls)
            is_module = _module_class_across(imported[0], cls)
        else:
            is_module = cls.is_module
        instance = Value(module=is_module, instance=name)
        if cls.is_record:  # StepOutput(loss=loss): the record carries its fields' graphs, where they are
            carried = _join_values(args)
            instance = replace(
                instance,
                tensor=carried.tensor,
                graph=carried.graph,
                host=carried.host,
                sources=carried.sources,
                exception=carried.exception,
            )
        return instance

    def _class_default(self, name: str) -> str | None:
        """The class a parameter defaults to, `actor_critic=core.MLPActorCritic`, when the function
        never rebinds it: what calling the parameter makes, unless a caller passes another."""
        if name in self.unit.bindings:
            return None
        for param in self.unit.params:
            if param.name.value == name and isinstance(param.default, (cst.Name, cst.Attribute)):
                default = dotted_name(param.default)
                return default if default != name and default not in BUILTIN_NAMES else None
        return None

    def summarized_call(self, call: cst.Call, args: list[Value]) -> Value | None:
        results = self._summarized(call, args, elements=False)
        return results[0] if results else None

    def module_call(self, call: cst.Call, args: list[Value]) -> Value | None:
        """`explainer(x)` where the project's `GradExplainer.forward` returns its masks detached,
        or numbers: that, not a module's output with its graph. Only where `forward` says so in
        its own code (`.detach()`, `.item()`, `no_grad`): a value the summary merely cannot follow
        is no evidence."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in ("forward", "__call__"):
            func = func.value  # `trainer.forward(images)`: the module called, spelled out
        known = self._method_of(func, "forward")
        if known is None or not drops_graph(known[1]):
            return None
        results = self._summarized_by(*known, call, args, elements=False)
        result = results[0] if results else None
        return result if result is not None and not result.graph and (result.scalar or result.tensor) else None

    def summarized_elements(self, call: cst.Call) -> tuple[Value, ...] | None:
        """Each position's value of the tuple a call returns, when the callee always returns one."""
        return self._summarized(call, [evaluate(arg.value, self) for arg in call.args], elements=True)

    def _summarized(self, call: cst.Call, args: list[Value], *, elements: bool) -> tuple[Value, ...] | None:
        callee = self._callee_unit(call)
        if callee is None:
            return None
        facts, target = callee
        joined: tuple[Value, ...] | None = None
        # An abstract method runs one of its overrides: what any of them gives.
        for each in overrides(facts.index, target) or [target]:
            results = self._summarized_by(facts, each, call, args, elements=elements)
            if results is None or (joined is not None and len(joined) != len(results)):
                return None
            joined = results if joined is None else tuple(a.join(b) for a, b in zip(joined, results, strict=True))
        return joined

    def _summarized_by(
        self, facts: Facts, target: Unit, call: cst.Call, args: list[Value], *, elements: bool
    ) -> tuple[Value, ...] | None:
        summary = summary_of(facts, target)
        given_graph = summary.elements_given_graph if elements else (summary.returns_given_graph,)
        plain = summary.elements_plain if elements else (summary.returns_plain,)
        if summary.flagged_plain and (known := _flags_at(call, target, self.unit, _flag_parameters(target))):
            # `trainer.forward(images)` with `return_images=False`: only the returns it reaches
            given_graph = _flagged_returns(summary.flagged_given_graph, known, elements)
            plain = _flagged_returns(summary.flagged_plain, known, elements)
        if given_graph is None or plain is None:
            return None
        if any(a.graph or a.requires_grad for a in args):  # (what it computes from a leaf has a graph)
            # The helper's parameter names mean nothing here: a graph kept comes from this call's arguments.
            given = frozenset().union(*(a.sources for a in args))
            results = tuple(
                replace(r, sources=given) if r.graph and r.sources != given else r
                for r in (_graph_from(r, self._graph_parameters(call, target)) for r in given_graph)
            )
        elif any(a.tensor for a in args) and not any(a.module for a in args):
            # Tensors without a graph, and no module passed to make one: what the helper makes of
            # them has none, unless it makes one of its own (`self.model(x)`: a graph whatever it is given).
            results = tuple(_own_graph_only(r, own) for r, own in zip(given_graph, plain, strict=True))
        else:
            results = plain
        if facts is not self.facts:
            # A closure made in another module: its node is not in this file, so no finding
            # can point at it here.
            results = tuple(replace(r, closure=None, captured=()) if r.closure else r for r in results)
        else:
            results = tuple(self._captured_given(r, call, target) if r.closure else r for r in results)
        return results if self.grad_enabled else tuple(r.without_graph() for r in results)

    def _forward_without_graph(self, call: cst.BaseExpression, count: int) -> dict[int, Value]:
        """The positions of the tuple that a project module's `forward` returns where its summary,
        given inputs with a graph, gives a value known to have none: a Python number
        (`acc.item()`) or a tensor that records none (`pred == y`) beside one that does. `loss, acc = model(x)` gives
        `acc` no graph; the other positions keep what calling a module gives (what the summary
        cannot tell included)."""
        if type(call) is not cst.Call or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return {}
        known = self._method_of(call.func, "forward") or self._criterion_forward(call)
        if known is None:
            return {}
        summary = summary_of(*known)
        if _handed_the_network(known[1]):
            # A criterion's `forward(self, model, sample)`: its own walk binds its parameters as the
            # call passes them, so each position is what its summary says (`logging_output` too).
            plain = summary.elements_plain
            return dict(enumerate(plain)) if plain is not None and len(plain) == count else {}
        elements = summary.elements_given_graph
        if elements is None or len(elements) != count:
            return {}
        # A tensor without a graph counts only where the summary sees the graph reach another
        # element, or `forward` drops it in its own code: forward's own parameters and lists it
        # does not follow would read as none.
        graph_seen = any(value.graph for value in elements) or drops_graph(known[1])
        return {
            i: value
            for i, value in enumerate(elements)
            if value.scalar or (value.tensor and not value.graph and graph_seen)
        }

    def _criterion_forward(self, call: cst.Call) -> tuple[Facts, Unit] | None:
        """`criterion(model, sample)`, the criterion of a class the code does not say: the
        `forward` of the file's one class whose `forward` is handed the network first (fairseq's
        criterions), as that is how the call passes it."""
        if not call.args or not evaluate(call.args[0].value, self).module:
            return None
        if evaluate(call.func, self).instance is not None:
            return None  # a class the code shows: `_method_of` answered
        forwards = [cls.methods["forward"] for cls in self.index.classes.values() if "forward" in cls.methods]
        found = [unit for unit in (self.index.method_units[id(f)] for f in forwards) if _handed_the_network(unit)]
        return (self.facts, found[0]) if len(found) == 1 else None

    def _exception_keeper(self, call: cst.Call) -> tuple[Facts, Unit] | None:
        """The helper a caught exception is handed to: of this file (`self._keep(e)`, `record(errors,
        e)`, `self.report.add_failure(name, e)`), or a method of an object whose class the code shows
        (`self.monitor.on_failure(step, e)` after `self.monitor = TrainingMonitor()`, imported); not
        every logger of the project's modules that an `except` block calls."""
        local = self._local_callee(call)
        if local is not None:
            return self.facts, local
        func = call.func
        return self._method_of(func.value, func.attr.value) if type(func) is cst.Attribute else None

    def _local_callee(self, call: cst.Call) -> Unit | None:
        """The function or method of this file a call runs, without reading other modules: of
        `self`, or of an object whose class the file shows."""
        func = call.func
        if type(func) is cst.Name:
            found = self.unit.lookup_def(func.value)
            return found if found is not None and type(found.node) is cst.FunctionDef else None
        if type(func) is cst.Attribute and self._on_self(func.value):
            cls = self.unit.cls
            for ancestor in lineage(self.index.classes, cls) if cls is not None else []:
                method = ancestor.methods.get(func.attr.value)
                if method is not None:
                    return self.index.method_units[id(method)]
        if type(func) is cst.Attribute and (known := self._method_of(func.value, func.attr.value)):
            return known[1] if known[0] is self.facts else None
        return None

    def _captured_given(self, closure: Value, call: cst.Call, target: Unit) -> Value:
        """The closure that a factory returns keeps, of the factory's parameters, those that this
        call hands memory: `make_hook(name, p)` over a model's parameter and its name keeps
        neither more than the model does."""
        params = [p.name.value for p in target.argument_params]
        given = arguments_by_position(call, target)
        captured = tuple(
            name
            for name in closure.captured
            if name not in params
            or ((arg := given.get(params.index(name))) is not None and evaluate(arg, self).keeps_memory)
        )
        if captured == closure.captured:
            return closure
        return replace(closure, captured=captured) if captured else replace(closure, closure=None, captured=())

    def _graph_parameters(self, call: cst.Call, target: Unit) -> set[str]:
        """The callee's parameters that this call hands a graph."""
        params = [p.name.value for p in target.argument_params]
        return {
            params[position]
            for position, arg in arguments_by_position(call, target).items()
            if position < len(params) and ((value := evaluate(arg, self)).graph or value.requires_grad)
        }

    def _callee_unit(
        self, call: cst.Call, *, read_modules: bool = True, across_project: bool = False
    ) -> tuple[Facts, Unit] | None:
        """The function or method of the project that a call runs, when the code says which; with
        `read_modules` False, only where no module has to be read for it; with `across_project`,
        also a method of an object the code does not say, that one module of the project alone
        defines (what a helper keeps of its arguments, not what it returns: a guess that is
        wrong costs a finding at most)."""
        func = call.func
        if type(func) is cst.Name:
            found = self._function_named(self.unit, func.value, read_modules)
            # `compute_loss(pred, targets)` after `compute_loss = ComputeLoss(model)`: its `__call__`
            return found if found is not None else self._method_of(func, "__call__")
        if type(func) is not cst.Attribute:
            return None
        through = self.imports.through_module(func) if read_modules else None
        if through is not None and (imported := resolve_import(self.facts, through)) is not None:
            facts, name = imported  # `utils.train_step(model, batch)`
            unit = facts.index.module_unit.defs.get(name)
            if unit is not None and type(unit.node) is cst.FunctionDef:
                return facts, unit
            if type(func.value) is not cst.Name or self.imports.origin(func.value.value) is None:
                return None  # (`tracker.add(x)` after `from tracker import tracker`: an object's method)
        method, known = func.attr.value, self._owner_class(func.value)
        return (
            (_inherited_method(*known, method) if known is not None else None)
            or self._stored_function(func, known, read_modules)
            or self._method_named_for(func.value, method, across_project, call)
        )

    def _function_named(self, unit: Unit, name: str, read_modules: bool) -> tuple[Facts, Unit] | None:
        """The function of the project that `name` means in `unit`: defined there or around it, or imported."""
        found = unit.lookup_def(name)
        if found is not None:
            return (self.facts, found) if type(found.node) is cst.FunctionDef else None
        imported = resolve_import(self.facts, name) if read_modules else None
        if imported is None:
            return None
        facts, defined = imported
        found = facts.index.module_unit.defs.get(defined)
        return (facts, found) if found is not None and type(found.node) is cst.FunctionDef else None

    def _stored_function(
        self, func: cst.Attribute, owner: tuple[Facts, ClassInfo] | None, read_modules: bool
    ) -> tuple[Facts, Unit] | None:
        """`self.critic_loss_fn(...)` where the class, its bases and its subclasses store one
        function of the project by its name (`self.critic_loss_fn = ppo_critic_loss`, not a
        parameter so named), and no code sets it on an object from outside; also on an object of
        such a class of this file (`engine._process_fn(engine, batch)`; `owner`: its class)."""
        cls, attribute = self.unit.cls, func.attr.value
        if not self._on_self(func.value):
            cls = owner[1] if owner is not None and owner[0] is self.facts else None
        if cls is None or attribute in self.index.foreign_attributes:
            return None
        family = [*lineage(self.index.classes, cls), *heirs(self.index.classes, cls)]
        stored = [pair for c in family for pair in c.attribute_values.get(attribute, [])]
        names = {_function_name(value, unit) for value, unit in stored}
        name = names.pop() if len(names) == 1 else None
        if name is not None:
            return self._function_named(stored[0][1], name, read_modules)
        if len(stored) == 1 and stored[0][1].name == "__init__" and type(stored[0][0]) is cst.Name:
            # `self._process_fn = process_fn` in `__init__`: the one function every construction
            # in the file passes (`Engine(_update)`)
            given = constructor_arguments(self.index, stored[0][1], stored[0][0].value)
            found = [
                self._function_named(site, arg.value, read_modules) if type(arg) is cst.Name else None
                for arg, site in given
            ]
            if found and all(found) and len({id(f[1]) for f in found if f}) == 1:
                return found[0]
        return None

    def _method_of(self, owner: cst.BaseExpression, method_name: str) -> tuple[Facts, Unit] | None:
        """The method of the project's class that `owner` is an instance of."""
        known = self._owner_class(owner)
        return _inherited_method(*known, method_name) if known is not None else None

    def _owner_class(self, owner: cst.BaseExpression) -> tuple[Facts, ClassInfo] | None:
        """The project's class that `owner` is an instance of."""
        instance = evaluate(owner, self).instance
        return self.facts.class_of(instance) if instance else self._imported_instance(owner)

    def _imported_instance(self, owner: cst.BaseExpression) -> tuple[Facts, ClassInfo] | None:
        """The class of an object another module of the project makes once, at its top level, and
        this one imports: `from tracker import tracker`, with `tracker = Tracker()` there."""
        if type(owner) is not cst.Name or self.imports.origin(owner.value) is None:
            return None
        imported = resolve_import(self.facts, owner.value)
        if imported is None:
            return None
        facts, name = imported
        made = facts.index.module_unit.bindings.get(name, [])
        classes = {dotted_name(value.func) if type(value) is cst.Call else None for value in made}
        cls = facts.index.classes.get(classes.pop() or "") if len(classes) == 1 else None
        return (facts, cls) if cls is not None else None

    def _method_named_for(
        self, owner: cst.BaseExpression, method_name: str, across_project: bool = False, call: cst.Call | None = None
    ) -> tuple[Facts, Unit] | None:
        """`logger.log_later(fn)` where `logger` is a parameter the file never builds: the method of
        the one class of this file that defines it, or with `across_project`, where the file defines
        none, of the one module of the project that does. For the methods of builtin containers
        (`update`, `append`, `get`), only when the object is named for the class (`tracker` for
        `EmbeddingTracker`, `loss_meter` for `AverageMeter`): `results.update(outputs)` beside an
        `AverageMeter` is a dict's. An item of a container is named by the container's plural
        (`meters["loss"]` for `AverageMeter`), whatever the method."""
        if method_name.startswith("__"):
            return None
        item = type(owner) is cst.Subscript
        dotted = dotted_name(owner.value if type(owner) is cst.Subscript else owner)
        if dotted is None or self.imports.qualify(owner) is not None or dotted in self.index.classes:
            # `super().forward(x)`, `F.relu(x)`: not an object the caller passes; nor a class of
            # this file, `GatherLayer.apply(x)`, whose methods are its own or its bases'
            return None
        if item or method_name in STORE_METHODS or method_name in _CONTAINER_METHODS:
            word = dotted.rsplit(".", 1)[-1].rsplit("_", 1)[-1].lower()
            if item:
                word = word.removesuffix("s")  # `meters["loss"]`: an item of a container named for the class
            # Of the classes so named, those whose method the call fits (`meters["loss"].update(v, n)`
            # beside a `TimeMeter.update(self, n=1)`).
            named = [
                cls
                for cls in self.index.classes.values()
                if class_word(cls.name) == word
                and method_name in cls.methods
                and (call is None or accepts(cls.methods[method_name], call))
            ]
            if len(named) != 1 or evaluate(owner, self) != UNKNOWN:
                return None
            return self.facts, self.index.method_units[id(named[0].methods[method_name])]
        known = evaluate(owner, self)
        # A network of a class the code does not say (`self.policy.evaluate_actions(obs, a)` after
        # `self.policy.train()`) runs the method of the file's one module class that defines it.
        some_module = known.module and known.instance is None and not known.tensor
        if known != UNKNOWN and not some_module:
            return None  # a tensor, a number or an instance the code shows: not guessed
        found = _one_definer(self.facts, method_name, some_module)
        if found is not None or not across_project or known != UNKNOWN:
            return found
        project, path = self.facts.project, self.facts.path
        if project is None or path is None or any(method_name in cls.methods for cls in self.index.classes.values()):
            return None  # nothing to read, or the file's own classes define it: not guessed elsewhere
        other = project.method_definer(path, method_name, _analyze_imported)
        return _one_definer(other, method_name, some_module) if other is not None else None

    def closure_value(self, node: cst.Lambda) -> Value:
        return self._closure(node, free_names(node), node.params)

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> None:
        if self.arguments is None and (called_in := self.facts.loops_at_call.get(id(self.unit))) is not None:
            # A step function: its body runs in its parent's loop, in the grad mode of the call;
            # what it binds is made afresh in each iteration, as in the loop's own body.
            self.loops, self.grad_enabled = list(called_in[0]), self.grad_enabled and called_in[1]
            self.iteration_fresh = [set() for _ in self.loops]
        self._bind_params()
        node = self.unit.node
        if self.arguments is None:
            self.facts.walks_pending.discard(id(self.unit))  # (its own reads of attributes it sets)
            self.data_comprehensions = self.facts.data_comprehensions.get(id(self.unit), set())
        if isinstance(node, cst.Lambda):
            self._effects(node.body)
            self.returns = evaluate(node.body, self)
        elif isinstance(node, cst.FunctionDef):
            self._block(node.body)
        else:
            self._statements(node.body)
        if self.arguments is None:
            self.facts.final_env[id(self.unit)] = self.env
            self.facts.reset_in_call[id(self.unit)] = frozenset(self.fresh)
            self._find_hook_cycles()

    def _called_only_under_no_grad(self) -> bool:
        """Every call of this function or method in the file runs under `no_grad` (`with
        torch.no_grad(): pred = model.inference(g, x)`): its author runs it without history. For
        one with a loop, the calls by its name in the project's other modules count too, and so
        do theirs for the functions of the file that call it with gradients on but that the file
        never calls (none anywhere: judged with gradients on); `forward` and `__call__` are
        called through the object, not by name."""
        unit = self.unit
        if not called_by_its_name(unit):
            return False
        calls = calls_under_no_grad(self.index, unit.name)
        if calls and not all(calls):
            # `self._store(k)` in the forward of a part run without gradients
            with_gradients = callers_with_gradients(self.index, unit.name)
            if all(self._a_part_run_without_grad(c) and not enables_gradients(c) for c in with_gradients):
                return True
        project, path = self.facts.project, self.facts.path
        if unit.has_loop and project is not None and path is not None and calls and all(calls):
            # Quiet here through a caller that the file runs without gradients, which another
            # module calls with them on (`predictor.predict_sliding_window_return_logits(data)` in
            # the trainer's validation): that call runs this one with gradients too.
            return not any(
                quiet is False
                for caller in callers_quiet_by_their_calls(self.index, unit.name)
                for quiet in project.calls_under_no_grad(
                    path, caller.name, caller.cls.name if caller.cls is not None else None
                )
            )
        if unit.has_loop and project is not None and path is not None and not (calls and all(calls)):
            # Called from other modules (`evaluate(model, loader)` in train.py, inside `with
            # torch.no_grad():`): every call the project shows by that name, and for each call
            # here with gradients on, the calls elsewhere of the function making it, which the
            # file never calls (`mc_dropout_inference_loop`, run under `no_grad` by the scripts).
            callers = list({id(c): c for c in callers_with_gradients(self.index, unit.name)}.values())
            if any(
                not called_by_its_name(c) or calls_under_no_grad(self.index, c.name) or enables_gradients(c)
                for c in callers
            ):
                return False  # (a caller that turns them on, `with torch.enable_grad():`, keeps them on)

            def elsewhere(function: Unit) -> list[bool]:
                owner = function.cls.name if function.cls is not None else None
                return project.calls_under_no_grad(path, function.name, owner)

            calls = [quiet for quiet in calls if quiet] + elsewhere(unit)
            for caller in callers:
                calls += elsewhere(caller) or [False]  # a caller nobody calls: judged with gradients on
        return bool(calls) and all(calls)

    def _a_part_run_without_grad(self, unit: Unit | None = None) -> bool:
        """The `forward` of a module that the project builds only as a part of modules that run it
        with gradients off (`syntax.parts_run_without_grad`): no other module builds it, nor any
        part on the way up (they could be trained there)."""
        unit = unit or self.unit
        project, path = self.facts.project, self.facts.path
        if unit.name != "forward" or not unit.is_method or unit.cls is None or not unit.cls.is_module:
            return False
        found = parts_run_without_grad(self.index, unit.cls)
        if found is None:
            return False
        chain, decorated = found
        if not all(
            any(self._disables_grad(d.decorator) for d in cast(cst.FunctionDef, m.node).decorators) for m in decorated
        ):
            return False  # a decorator named `no_grad` that is not torch's (`enable_grad as no_grad`)
        if project is None or path is None:
            return True  # a text without a file: no other module
        # (a file outside any project: which modules build its classes cannot be known)
        return project.scans_calls(path) and not any(project.calls_under_no_grad(path, c, None) for c in chain)

    def _decorated_no_grad(self) -> bool:
        """`@torch.no_grad()`, or a module's step that Lightning runs under no_grad (`validation_step`),
        or a hook of a Lightning class that its evaluation loop runs (`on_validation_epoch_end`)."""
        node = self.unit.node
        if type(node) is not cst.FunctionDef:
            return False
        cls = self.unit.cls
        if (
            self.unit.is_method
            and cls is not None
            and node.name.value in NO_GRAD_STEP_METHODS
            and _module_class_across(self.facts, cls)  # a LightningModule through the project's bases too
        ):
            return True
        if (
            self.unit.is_method
            and cls is not None
            and node.name.value.startswith(_EVALUATION_HOOKS)
            and _is_lightning(self.facts, cls)
        ):
            return True
        if (
            self.unit.is_method
            and cls is not None
            and node.name.value == "update"
            and (_is_torchmetrics(self.facts, cls) or _forward_updates_without_grad(self.facts, cls))
        ):
            return True  # torchmetrics runs `update` with grad disabled; so does a metric's own `forward`
        return any(self._disables_grad(decorator.decorator) for decorator in node.decorators)

    def _disables_grad(self, decorator: cst.BaseExpression) -> bool:
        if self._grad_mode(decorator) is False:
            return True
        shown = self._decorator_functions(decorator)
        if shown is None:  # a class used as one (its `__call__` is not read), or another package's
            return _named_for_no_grad(decorator, self.imports)
        facts, decorators = shown  # what they do is read, not guessed from the name (`@warn_if_no_grad`)
        modes = {_wrapped_grad_mode(facts, unit) for unit in decorators if unit is not None and unit is not self.unit}
        return modes == {False}  # one mode, and it turns gradients off

    def _decorator_functions(self, decorator: cst.BaseExpression) -> tuple[Facts, list[Unit | None]] | None:
        """The functions of the project that a decorator wraps the function in, to read the mode
        they set around it (`_wrapped_grad_mode`): `@smart_inference_mode()`, whose
        `decorate(fn)` returns `torch.inference_mode()(fn)`, or `@no_grad_wrapper`, whose
        `wrapper(*args)` calls `fn` inside `with torch.no_grad():`; read in the decorator's module.
        None where the project shows no such function."""
        if type(decorator) is cst.Call:
            found = self._callee_unit(decorator)
            if found is None or type(found[1].node) is not cst.FunctionDef or found[1].name == "__init__":
                return None
            facts, factory = found  # each `return decorate` of the factory gives a decorator it defines
            return facts, [
                factory.defs.get(r.value.value) for r, _ in placed(factory, cst.Return) if type(r.value) is cst.Name
            ]
        if type(decorator) is cst.Name and (defined := self.unit.lookup_def(decorator.value)) is not None:
            return self.facts, [defined]
        return None

    def _bind_params(self) -> None:
        unit = self.unit
        params = unit.argument_params
        hook = Role.MODULE_HOOK in unit.roles or Role.TENSOR_HOOK in unit.roles
        positional = [p for p in params if p.name.value not in unit.skip_keywords][unit.skip_params :]
        detached: set[str] | None = None  # `_detached_params`, read once when first needed
        for position, param in enumerate(positional):
            name = param.name.value
            words = unit.annotations[name]
            if hook:
                first_is_module = Role.MODULE_HOOK in unit.roles and position == 0
                value = (
                    MODULE
                    if first_is_module
                    else PARAMETER
                    if unit.given_parameter
                    else TENSOR
                    if unit.given_gradients
                    else GRAPH
                )
            elif Role.FORWARD in unit.roles and not words and is_model_name(name):
                value = MODULE  # a criterion's `forward(self, model, sample)` is handed the network
            elif Role.FORWARD in unit.roles:
                # In training, what forward is given is an activation: it carries the graph before it.
                is_tensor = _forward_param_is_tensor(param, words) and name not in unit.list_evidence
                is_tensor = is_tensor and name not in spatial_sizes([p.name.value for p in params])
                integers = is_index_name(name) or names_integer_field(name)
                indices = integers and not any("Float" in word for word in words)
                value = (TENSOR if indices else GRAPH) if is_tensor else UNKNOWN
            elif words & {"Type", "type", "Callable"}:
                value = UNKNOWN  # a class or a factory, not an instance
            elif any(w.endswith("Tensor") for w in words):
                # A meter's `update` or a `training_step` is handed the step's outputs: with their graph.
                # Ground truth (`target`, `labels`, `mask`) comes from the data, without a graph.
                given = self._graph_given() and not is_data_name(name)
                value = GRAPH if given else TENSOR
            elif "Module" in words or any(
                is_torch_module_class(w) or self.is_local_module_class(w) or names_a_loss_class(w) for w in words
            ):
                annotated = single_class(words)  # `model: Tagger`: an instance of the file's module class
                value = replace(MODULE, instance=annotated) if annotated in self.index.classes else MODULE
            elif (annotated := single_class(words)) and (instance := self.local_instance(annotated, [])):
                value = instance  # `meter: ErrorMeter`, `model: Net`: an instance of the project's class
            elif (
                not words
                and (passed := self._passed_instance(position, name))
                and not (is_model_name(name) and not self._plain_object(passed))
            ):
                # `run_epoch(data, model, SimpleLossCompute(...))`: an object of the file's class; under a
                # network's name only one that neither is nor holds a network (`Encoder(args)`, of text)
                value = passed
            elif not words and (is_model_name(name) or is_criterion_name(name)):
                value = MODULE  # `def evaluate(model, loader)`, `criterion`: named for what it holds
            elif position == 0 and unit.is_method and unit.name in LIGHTNING_STEPS and not words:
                value = TENSOR  # Lightning hands a step the loader's batch: tensors, without a graph
            elif name == "outputs" and unit.is_method and _a_batch_end_hook(unit.name) and words <= _OUTPUTS_TYPES:
                value = TENSOR  # what the step returned, its `loss` detached by Lightning
            else:
                value = UNKNOWN
            if param.default is not None and evaluate(param.default, self).cuda and self._default_applies(param):
                value = CUDA  # def collate(batch, device="cuda")
            elif param.default is not None and value == UNKNOWN and names_the_host(param.default, self):
                value = HOST  # `embedding_device="cpu"`: `.to(embedding_device)` keeps it in host memory
            if name in unit.graph_evidence and not value.module:
                value = GRAPH
            elif (
                value == UNKNOWN
                and not words
                and name in (detached := _detached_params(unit) if detached is None else detached)
            ):
                # `prios = td.detach().abs()`: its author knows it carries a graph (not `p: nn.Parameter`,
                # which an annotation says is a leaf)
                value = GRAPH
            if words and words <= _PYTHON_SCALAR_ANNOTATIONS:
                # `H: int`: no caller passes a tensor there, summaries included; `device: str = "cuda"` names CUDA
                value = replace(SCALAR, cuda=value.cuda, host=value.host) if value.cuda or value.host else SCALAR
            elif self.arguments is not None:
                value = replace(self.arguments, sources=frozenset([name]) if self.arguments.graph else frozenset())
            self.env[name] = value if self.grad_enabled else value.without_graph()  # `@torch.no_grad()`
        for name, bound in unit.skip_keywords.items():
            self.env[name] = evaluate(bound, self)  # `partial(collate, device=torch.device("cuda"))`
        if unit.self_name is not None and unit.is_method and unit.cls is not None:
            self.env[unit.self_name] = Value(module=unit.cls.is_module, instance=unit.cls.name)
        if unit.call_sites and self.arguments is None:
            self._bind_from_call_sites(positional)

    def _plain_object(self, value: Value) -> bool:
        """An object of the file's class that is no network and keeps none on itself."""
        cls = self.index.classes.get(value.instance) if value.instance is not None else None
        if cls is None or value.module:
            return False
        attributes = {name for c in lineage(self.index.classes, cls) for name in c.attribute_values}
        return not any(attribute_value(self.facts, cls, name).module for name in attributes)

    def _passed_instance(self, position: int, name: str) -> Value | None:
        """An instance of one class of this file that a module-level function's parameter holds:
        what every call in the file passes there, made there (`run_epoch(it, model,
        SimpleLossCompute(g, crit))`); without calls, the one class the parameter is named for
        (`loss_compute` for `SimpleLossCompute`, `meter` for `AverageMeter`), also for a method that
        the file never calls (a handler given `engine`, another module's `GANEngine`'s)."""
        unit = self.unit
        if unit.is_method and not unit.call_sites and unit.name not in self.index.named_calls:
            # (not of the method's own class: `MaskedModel.__init__(self, model)` wraps another model)
            return self._instance_named(name, excluding=unit.cls.name if unit.cls is not None else None)
        if unit.is_method or unit.parent is None:
            return None
        made = set()
        for call, caller in self.index.named_calls.get(unit.name, []):
            given = arguments_by_position(call, unit).get(position + unit.skip_params)
            # made there, or bound there once to what is made: `trainer = Trainer(...)`
            bound = caller.lookup_bindings(given.value) if type(given) is cst.Name else [given]
            made_by = bound[0] if len(bound) == 1 else None
            if type(made_by) is not cst.Call or type(made_by.func) is not cst.Name:
                return None
            if made_by.func.value not in self.index.classes:
                return None
            made.add(made_by.func.value)
        if not made:
            return self._instance_named(name)
        return self.local_instance(made.pop(), []) if len(made) == 1 else None

    def _instance_named(self, name: str, excluding: str | None = None) -> Value | None:
        """An instance of the one class of the file (other than `excluding`) that a parameter is named for."""
        words = name.lower().split("_")
        named = {
            c
            for c in self.index.classes
            if c != excluding and class_word(c) == words[-1] and set(words) <= set(class_words(c))
        }
        return self.local_instance(named.pop(), []) if len(named) == 1 else None

    def _default_applies(self, param: cst.Param) -> bool:
        """Whether a CUDA default (`device="cuda"`) may be what the function runs with: unless every
        call of it in the file passes the parameter, and none of them passes CUDA (`device=self.device`
        from a dataset whose own default is the CPU)."""
        unit, node = self.unit, self.unit.node
        calls = self.index.named_calls.get(unit.name, []) if not unit.is_method else []
        if not calls or type(node) is not cst.FunctionDef:
            return True
        position = [p.name.value for p in unit.params].index(param.name.value)
        for call, caller in calls:
            given = arguments_by_position(call, unit).get(position)
            if given is None:
                return True
            scope = _Walker(self.facts, caller)
            scope.env = dict(self.facts.names_at_end(caller) or {})
            if evaluate(given, scope).cuda:
                return True
        return False

    def _bind_from_call_sites(self, params: list[cst.Param]) -> None:
        """A helper of repeating code gets what its callers pass, as it was where each call is made
        (`self._keep(h.item())` gives a number; `self._keep(scale)` in a branch that returns, the
        graph the branch computed)."""
        given: dict[int, Value] = {}
        for call, caller in self.unit.call_sites:
            env = self.facts.names_at_end(caller)
            if env is None:
                return  # a caller not walked yet: keep what the parameters' own evidence says
            scope = _Walker(self.facts, caller)
            scope.env = dict(env)
            for position, arg in arguments_by_position(call, self.unit).items():
                value = self.facts.argument_values.get(id(arg)) or evaluate(arg, scope)
                given[position] = given[position].join(value) if position in given else value
        for position, param in enumerate(params):
            if position in given and not (given[position] == UNKNOWN and param.annotation is not None):
                # (callers that pass what the file cannot tell leave the parameter as annotated)
                value = given[position] if self.grad_enabled else given[position].without_graph()
                if self.unit.called_per_batch and value.graph:
                    source = frozenset([param.name.value])  # see `_judged_at_calls`: entries too (`stats["loss"]`)
                    keys = tuple((k, replace(v, sources=source)) for k, v in value.keys) if value.keys else value.keys
                    value = replace(value, sources=source, keys=keys)
                self.env[param.name.value] = value

    # -- statements ----------------------------------------------------------------------------

    def _block(self, block: cst.BaseSuite) -> None:
        if type(block) is cst.SimpleStatementSuite:
            for small in block.body:
                self._small(small)
        else:
            assert type(block) is cst.IndentedBlock
            self._statements(block.body)

    def _statements(self, statements: Sequence[cst.BaseStatement]) -> None:
        flags_before = len(self.flags_now)
        for statement in statements:
            self._statement(statement)
        del self.flags_now[flags_before:]  # (`if not flag: return x` flags the rest of its block)

    def _statement(self, statement: cst.BaseStatement) -> None:
        self.call_values.clear()  # names and the grad mode change between statements
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                self._small(small)
        elif type(statement) is cst.If:
            self._effects(statement.test)
            before, fresh, iteration = dict(self.env), set(self.fresh), self._iteration_copy()
            rebound = set(self.rebound)
            grad_before = self.grad_enabled
            self.conditions.append(statement.test)
            guarded = tensor_guard(statement.test, self.imports)  # `isinstance(val, torch.Tensor)`
            if guarded is not None and not guarded[1]:
                self.env[guarded[0]] = UNKNOWN  # `if not isinstance(val, Tensor):` val is no tensor here
            numbered = number_guard(statement.test)
            if numbered is not None and numbered[1]:
                self.env[numbered[0]] = SCALAR  # `if isinstance(value, (int, float)):` a number here
            flag = self._flag_tested(statement.test)
            self.flags_now += [flag] if flag else []
            self._block(statement.body)
            if flag:
                self.flags_now.pop()
            after_body, self.env = self.env, before
            grad_after_body, self.grad_enabled = self.grad_enabled, grad_before
            fresh_after_body, self.fresh = self.fresh, fresh
            rebound_after_body, self.rebound = self.rebound, rebound
            iteration_after_body, self.iteration_fresh = self.iteration_fresh, iteration
            if guarded is not None and guarded[1]:
                self.env[guarded[0]] = UNKNOWN
            if numbered is not None and not numbered[1] and statement.orelse is not None:
                self.env[numbered[0]] = SCALAR  # the `else` of `if not isinstance(value, float):`
            self.flags_now += [(flag[0], not flag[1])] if flag else []
            if statement.orelse is not None:
                if type(statement.orelse) is cst.If:
                    self._statement(statement.orelse)
                else:
                    self._block(statement.orelse.body)
            if flag and (statement.orelse is not None or not _leaves(statement.body)):
                self.flags_now.pop()  # (after `if flag: return a`, the rest of the block runs without it)
            if not _leaves(statement.body):  # `if hasattr(v, "item"): return v.item()`: only the other path goes on
                self.env = _join_env(after_body, self.env)
            self.grad_enabled = self.grad_enabled or grad_after_body  # on after the `if` where either path left it on
            if type(statement.test) is cst.Name and statement.test.value == "True":
                self.fresh, self.rebound = fresh_after_body, rebound_after_body  # `if True:` always runs its body
            self.fresh &= fresh_after_body
            self.rebound &= rebound_after_body
            for mine, theirs in zip(self.iteration_fresh, iteration_after_body, strict=True):
                mine &= theirs
            self.conditions.pop()
        elif isinstance(statement, (cst.For, cst.While)):
            self._loop(statement)
        elif type(statement) is cst.With:
            self._with(statement)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            fresh, rebound = set(self.fresh), set(self.rebound)
            self._block(statement.body)
            if not all(_reraises(handler) for handler in statement.handlers):
                self.fresh &= fresh  # a handler that goes on may run after any statement of the body
                self.rebound &= rebound
            for handler in statement.handlers:
                if handler.name is not None and type(handler.name.name) is cst.Name:
                    self.env[handler.name.name.value] = EXCEPTION
                self._block(handler.body)
            if statement.orelse is not None:
                self._block(statement.orelse.body)
            if statement.finalbody is not None:
                self._block(statement.finalbody.body)
        elif type(statement) is cst.FunctionDef:
            self._nested_def(statement)
        elif type(statement) is cst.ClassDef:
            self._local_class(statement)
        elif type(statement) is cst.Match:
            self._effects(statement.subject)
            fresh, rebound = set(self.fresh), set(self.rebound)
            for case in statement.cases:
                self._block(case.body)
            self.fresh &= fresh
            self.rebound &= rebound

    def _note_names_before(self, loop: cst.For | cst.While, names: dict[str, Value]) -> None:
        """What the names may hold where a loop starts, joined over the walks that reach it."""
        known = self.facts.names_before_loop.get(id(loop))
        self.facts.names_before_loop[id(loop)] = dict(names) if known is None else _join_env(known, names)

    def _loop(self, statement: cst.For | cst.While) -> None:
        if isinstance(statement, cst.For):
            self._effects(statement.iter)
            for target, iterable in _paired_items(statement.target, statement.iter):
                self._bind(target, self._item(iterable) if iterable is not None else UNKNOWN)
        else:
            self._effects(statement.test)
        loop = self._loop_info(statement)
        before, fresh, rebound = dict(self.env), set(self.fresh), set(self.rebound)
        if self.arguments is None:
            self._note_names_before(statement, before)
        self.loops.append(loop)
        self.iteration_fresh.append(set())
        self._block(statement.body)
        if self.arguments is None:  # a later iteration starts the loops inside with what the body left
            for inner in own_nodes(statement.body):
                if type(inner) is cst.For or type(inner) is cst.While:
                    self._note_names_before(inner, self.env)
        self.iteration_fresh.pop()
        self.loops.pop()
        self.env = _join_env(before, self.env)
        self.fresh &= fresh  # the body may not run
        self.rebound &= rebound
        for emptied in emptied_each(statement):
            self._note_reset(emptied, True)
        if type(statement) is cst.For and (replaced := entries_replaced(statement)) is not None:
            self._entries_converted(*replaced)
        if statement.orelse is not None:
            self._block(statement.orelse.body)

    def _entries_converted(self, name: str, written: list[cst.BaseExpression]) -> None:
        """A dict whose every tensor entry a loop replaced by a value without history: numbers
        (`logs[k] = v.item()`, `.cpu().numpy()`) or detached tensors (`d[k] = d[k].detach()`)."""
        numbers = all(_to_numbers(value) for value in written)
        if not numbers and not all(_drops_graph(value) for value in written):
            return
        converted = replace(self.lookup(name).without_graph(), sources=frozenset())
        self.env[name] = replace(converted, tensor=False, scalar=True, keys=None) if numbers else converted

    def _item(self, iterable: cst.BaseExpression) -> Value:
        """What each item of a loop over `iterable` is."""
        if _names_a_state_dict(iterable, self.unit) or _bound_to_a_dict(iterable, self.unit):
            return UNKNOWN  # `for key in state_dict`: a dict of tensors iterates its names
        if _a_groups_params(iterable):
            return PARAMETER  # `for p in group["params"]`: an optimizer's parameter group
        iterated = evaluate(iterable, self)
        if iterated.keys is not None and iterated.instance is None:
            return UNKNOWN  # `for name in metrics` of `{"mse": mse, "mae": mae}`: its keys, names
        return Value(
            tensor=iterated.tensor,
            graph=iterated.graph,
            module=iterated.module and not iterated.tensor,  # `for layer in self.layers`
            instance=None if iterated.tensor else self._item_class(iterable),
            sources=iterated.sources,  # `for v in given.values()`: each item carries the argument's graph
            requires_grad=iterated.requires_grad,  # `for p in model.parameters()`
            host=iterated.host,
        )

    def _item_class(self, iterated: cst.BaseExpression) -> str | None:
        """The class of the items of `callbacks` in `for cb in callbacks`, by its annotation
        (`callbacks: list[Callback]`, a parameter or a local), or of `self.callbacks` set from
        such a parameter: each item's methods run in the loop."""
        if type(iterated) is cst.Name:
            return _annotated_item_class(self.unit, iterated.value)
        attribute = self_attribute(self.unit, iterated)
        if attribute is None or self.unit.cls is None:
            return None
        found = {
            _annotated_item_class(unit, value.value)
            for cls in lineage(self.index.classes, self.unit.cls)
            for value, unit in cls.attribute_values.get(attribute, [])
            if type(value) is cst.Name
        }
        return found.pop() if len(found) == 1 else None

    def _with(self, statement: cst.With) -> None:
        saved = self.grad_enabled
        for item in statement.items:
            self._effects(item.item)
            mode = self._grad_mode(item.item)
            if mode is not None:
                self.grad_enabled = mode
            if item.asname is not None:
                self._bind(item.asname.name, evaluate(item.item, self))
        scoped = {name for item in statement.items if (name := _local_scope_of(item.item))} - self.own_graphs
        self.own_graphs |= scoped
        self._block(statement.body)
        self.own_graphs -= scoped
        self.grad_enabled = saved

    def _grad_mode(self, expr: cst.BaseExpression) -> bool | None:
        """False inside no_grad/inference_mode, True inside enable_grad; None if unchanged."""
        if type(expr) is cst.IfExp:  # `enable_grad() if train else no_grad()`: prefer silence
            modes = {self._grad_mode(expr.body), self._grad_mode(expr.orelse)}
            return False if False in modes else None
        if type(expr) is cst.Call and type(expr.func) is cst.IfExp and not expr.args:
            return self._grad_mode(expr.func)  # `(torch.inference_mode if new else torch.no_grad)()`
        bound = self.unit.bindings.get(expr.value, []) if type(expr) is cst.Name else []
        if len(bound) == 1 and type(bound[0]) is cst.Call:  # `ctx = torch.no_grad()`, then `with ctx, autocast:`
            return self._grad_mode(bound[0])
        call = expr if type(expr) is cst.Call else None
        qualified = self.imports.qualify(call.func if call else expr) or ""
        if qualified.startswith("torch."):
            argument = literal_bool(call.args[0].value) if call and call.args else None
            return grad_mode_set_by(qualified.rsplit(".", 1)[-1], argument, bool(call and call.args))
        if call is None:
            return None
        mode = self._context_grad_mode(call)
        return mode if mode is not None else grad_mode_asked(keyword_bools(call))

    def _context_grad_mode(self, call: cst.Call) -> bool | None:
        """The mode inside `with self._set_training_mode(False):`, a `@contextmanager` of this module
        that yields inside `torch.set_grad_enabled(training)` or `torch.no_grad()` (the arguments
        of the call stand for its parameters)."""
        found = self._callee_unit(call, read_modules=False)
        if found is None or found[0] is not self.facts or id(found[1]) in self._entered:
            return None  # (one that enters itself, `with self.x.tensor_init_context()` guessed by name, sets nothing)
        unit = found[1]
        node = unit.node
        if type(node) is not cst.FunctionDef or not any(
            (dotted_name(d.decorator) or "").endswith("contextmanager") for d in node.decorators
        ):
            return None
        self._entered.add(id(unit))
        try:
            return self._mode_inside(unit, node, call)
        finally:
            self._entered.discard(id(unit))

    def _mode_inside(self, unit: Unit, node: cst.FunctionDef, call: cst.Call) -> bool | None:
        """The grad mode around the `yield` of a context manager of this module, for this `call`."""
        params = [p.name.value for p in unit.argument_params]
        given = arguments_by_position(call, unit)
        modes: list[bool | None] = []
        for block in walk(node.body):
            if type(block) is not cst.With or not any(type(n) is cst.Yield for n in walk(block.body)):
                continue
            for item in block.items:
                inner = item.item
                if type(inner) is cst.Call and inner.args and type(inner.args[0].value) is cst.Name:
                    name = inner.args[0].value.value  # `set_grad_enabled(training)`: the caller's `training`
                    if name in params and params.index(name) in given:
                        inner = inner.with_changes(args=[inner.args[0].with_changes(value=given[params.index(name)])])
                modes.append(self._grad_mode(inner))
        switched = {mode for mode in modes if mode is not None}  # `nullcontext()` or `open()` switch nothing
        return switched.pop() if len(switched) == 1 else None

    def _grad_switch(self, call: cst.Call) -> bool | None:
        """The mode `torch.set_grad_enabled(False)` sets as a statement, until it is set again
        (`no_grad()` alone is a context manager: called as a statement it changes nothing)."""
        qualified = self.imports.qualify(call.func)
        return (
            self._grad_mode(call)
            if qualified in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled")
            else None
        )

    def _nested_def(self, node: cst.FunctionDef) -> None:
        self.env[node.name.value] = self._closure(node, free_names(node), node.params)
        for decorator in node.decorators:
            self._effects(decorator.decorator)

    def _local_class(self, node: cst.ClassDef) -> None:
        """A class made by each call: classes live in reference cycles (`__mro__`, the methods'
        `__class__` cell), so the tensors this call made that its methods capture stay alive until
        the cyclic garbage collector runs, whether or not the class or an instance escapes (the
        caller's own tensors, given as arguments, it holds anyway: `torch.cuda.graphs` builds its
        `Graphed` function class over the static buffers it is given, once per callable)."""
        if type(self.unit.node) is cst.Module:
            return
        given: set[str] = set()  # the call's arguments its methods capture: kept only with an instance
        for statement in walk(node.body, into_functions=False):  # methods, also under `if` or `try`
            if type(statement) is cst.FunctionDef:
                everything = self._closure(statement, free_names(statement), statement.params).captured
                captured = self._made_here(everything)
                given.update(everything)
                if captured:
                    how = "a method of a class the function defines"
                    self.facts.escapes.append(
                        ClosureEscape(statement, self.unit, captured, how, local_class=node.name.value)
                    )
        # The call's own arguments that the methods capture: `_Entry()` makes an instance holding
        # them (see `_call`), which keeps them wherever it is stored (the methods' capture of what
        # the call made is reported above; handed back, the caller holds its arguments anyway).
        handed = sorted(given - set(self._made_here(tuple(given))))
        if handed:
            self.env[node.name.value] = Value(closure=node, captured=tuple(handed))

    def _closure(self, node: cst.CSTNode, free: set[str], params: cst.Parameters) -> Value:
        if type(self.unit.node) is cst.Module:
            return UNKNOWN  # module-level closures capture globals, which live anyway
        # A name the closure calls holds a function (or a module), whatever record it came from.
        called = {n.func.value for n in walk(node) if type(n) is cst.Call and type(n.func) is cst.Name}
        captured = sorted(n for n in free - called if n in self.env and self.env[n].keeps_memory)
        for param in all_params(params):
            if param.default is not None and evaluate(param.default, self).keeps_memory:
                captured.append(param.name.value)
        return Value(closure=node, captured=tuple(captured)) if captured else UNKNOWN

    # -- small statements ----------------------------------------------------------------------

    def _small(self, small: cst.BaseSmallStatement) -> None:
        self.call_values.clear()
        if self.data_comprehensions:
            self._collected_over_data(small)
        if type(small) is cst.Assign:
            self._effects(small.value)
            value = evaluate(small.value, self)
            for target in small.targets:
                self._assign(target.target, small.value, value, small)
                self._note_reset(target.target, resets_container(small.value, target.target))
                self._note_assigned(target.target, small.value)
        elif type(small) is cst.Del:
            for deleted in _deleted(small.target):
                if type(deleted) is cst.Subscript:
                    self._note_reset(deleted.value, _is_whole_slice(deleted))
        elif type(small) is cst.AnnAssign:
            if small.value is not None:  # `outs: list[Tensor] = []` resets as `outs = []` does
                self._effects(small.value)
                value = evaluate(small.value, self)
                if not (value.tensor or value.graph or value.module) and _numbers_annotated(
                    small.annotation.annotation
                ):
                    value = SCALAR  # `loss: float = meter.average()`: what the code does not show, the annotation says
                self._assign(small.target, small.value, value, small)
                self._note_reset(small.target, resets_container(small.value, small.target))
                self._note_assigned(small.target, small.value)
        elif type(small) is cst.AugAssign:
            self._aug_assign(small)
        elif type(small) is cst.Expr:
            self.discarded = small.value
            self._effects(small.value)
            call = small.value
            mode = self._grad_switch(call) if type(call) is cst.Call else None
            if mode is not None:  # `torch.set_grad_enabled(False)`
                self.grad_enabled = mode
            if type(call) is cst.Call and callee_name(call) == "clear" and (emptied := receiver(call)) is not None:
                self._note_reset(emptied, True)
            if type(call) is cst.Call and callee_name(call) in _MODULE_ONLY_METHODS:
                self._known_module(receiver(call))
        elif type(small) is cst.Return:
            if small.value is not None:
                self._effects(small.value)
                returned = self._returned_value(small.value)
                # Joined with the returns before it only: a function that returns numbers gives a number.
                # (Not a return in a loop: the loop is walked once, before its later iterations' values.)
                self.returns = self.returns.join(returned) if self.has_returned or self.loops else returned
                self.has_returned = True
                if not self._output_and_its_loss(small.value):
                    self._escape(returned, "returned")
                self.facts.returned.setdefault(id(self.unit), set()).update(self._kept_references(small.value))
                if self._outputs_kept_for_epoch_end():
                    self._epoch_outputs(small.value)
        elif isinstance(small, (cst.Raise, cst.Assert)):
            for child in small.children:
                if isinstance(child, cst.BaseExpression):
                    self._effects(child)

    def _known_module(self, called: cst.BaseExpression | None) -> None:
        """`model.eval()`, `model.load_state_dict(state)`: only a module has these, so a name taken
        for a tensor (`model = deserialize_model(pkg)`, a factory the file does not show) holds one."""
        if type(called) is cst.Name and (value := self.env.get(called.value)) is not None and value.tensor:
            self.env[called.value] = MODULE

    def _outputs_kept_for_epoch_end(self) -> bool:
        """`training_step` of a class that defines `training_epoch_end`: Lightning hands that hook
        the outputs of every step of the epoch, so it keeps them all until the epoch ends."""
        unit, cls = self.unit, self.unit.cls
        if not unit.is_method or unit.name != "training_step" or cls is None or not cls.is_module:
            return False
        return any("training_epoch_end" in c.methods for c in lineage(self.index.classes, cls))

    def _epoch_outputs(self, returned: cst.BaseExpression) -> None:
        """The entries of a returned dict besides `loss`, which Lightning detaches (from 1.6 on,
        it keeps the others as they are): written in the return, or, for a dict returned by name
        (`output = {"loss": loss, "emb": emb}; return output`), as the code that built it shows them."""
        entries: list[tuple[str | None, cst.BaseExpression]] = []
        if type(returned) is cst.Dict:
            entries = [(string_value(e.key), e.value) for e in returned.elements if type(e) is cst.DictElement]
        elif type(returned) is cst.Call and callee_name(returned) == "dict" and type(returned.func) is cst.Name:
            entries = [(a.keyword.value, a.value) for a in returned.args if a.keyword is not None]
        else:
            whole = evaluate(returned, self)
            graphs = [(key, value) for key, value in whole.keys or () if key not in ("loss", "hiddens") and value.graph]
            if graphs:
                keys = ("entries " if len(graphs) > 1 else "entry ") + ", ".join(f"`{key}`" for key, _ in graphs)
                output = Store(
                    node=returned,
                    unit=self.unit,
                    container=returned,
                    value=graphs[0][1],
                    value_expr=returned,
                    grows=True,
                    loops=(),
                    via=keys,
                )
                self.facts.epoch_outputs.append(output)
        for key, expr in entries:
            value = evaluate(expr, self)
            if key not in ("loss", "hiddens") and value.graph:
                kept = Store(
                    node=expr, unit=self.unit, container=returned, value=value, value_expr=expr, grows=True, loops=()
                )
                self.facts.epoch_outputs.append(kept)

    def _iteration_copy(self) -> list[set[str]]:
        return [set(names) for names in self.iteration_fresh]

    def _note_reset(self, container: cst.BaseExpression, emptied: bool) -> None:
        name = dotted_name(container)
        if name is not None:
            if emptied:
                self.fresh.add(name)
            else:
                self.fresh.discard(name)

    def _store(
        self,
        node: cst.CSTNode,
        container: cst.BaseExpression,
        value: Value,
        value_expr: cst.BaseExpression,
        grows: bool,
        via: str | None = None,
        concatenates: bool = False,
        key: Value | None = None,
        for_the_run: bool = False,
        entry: str | None = None,
    ) -> None:
        if type(container) is cst.Name and (own := self._own_container(container.value)) is not None:
            container = own  # `for key, values in self.curves.items(): values.append(h)` grows `self.curves`
        if self._judged_at_calls(value) or self._replayed_at_calls(node):
            return
        node, via = self.report_at or node, via or self.replay_via
        root = root_name(container)
        fresh = root in self.fresh or self._owned_graph(root)
        if value == UNKNOWN and root in self.index.concatenated:
            # The code concatenates the container's items with torch: they are tensors; what a
            # per-step method is handed is the step's output, graph included.
            given = (
                type(value_expr) is cst.Name
                and value_expr.value in self._param_names()
                and not is_data_name(value_expr.value)
            )
            value = GRAPH if given and self._graph_given() and self.grad_enabled else TENSOR
            if type(value_expr) is cst.Call and moves_to_the_host(value_expr, self):
                value = replace(value, host=True)  # `xs.append(x.to(embedding_device))`, which defaults to "cpu"
        if any(_reads_length_of(test, container) for test in self.conditions):
            grows = False  # `if len(self.pool) < size: self.pool.append(x)`: capped
        if any(self._first_call_only(test) for test in self.conditions):
            grows = False  # `if self.timesteps == 0: self.params.append(p)`, then `self.timesteps += 1`
        if self.loops and root is not None and self._popped_in(self.loops[-1].node, root):
            grows = False  # `queue.append(x)`, then `queue.pop(0)` in the same loop: one in, one out
        if not self.grad_enabled and (concatenates or self.facts.container_kind(self.unit, container)[1] == "tensor"):
            # Under `no_grad`, `stats[i] = loss` copies into the tensor and `torch.cat` makes a new
            # one, neither with history; a list or dict would still keep `loss` and its graph.
            value = value.without_graph()
        loops = tuple(self.loops)
        store = Store(
            node, self.unit, container, value, value_expr, grows, loops, via, fresh, concatenates,
            self._reset_in(container), key, for_the_run,
        )  # fmt: skip
        self.facts.stores.append(store)
        if (
            entry is not None
            or value.graph
            or (value.tensor and (self.arguments is not None or self._a_dict(container)))
        ):
            self._holds(container, value, entry)  # (`out["n"] = x.size(0)`: that entry is a number now)

    def _owned_graph(self, root: str | None) -> bool:
        return root is not None and any(root == g or root.startswith(f"{g}.") for g in self.own_graphs)

    def _a_dict(self, container: cst.BaseExpression) -> bool:
        return self.facts.container_kind(self.unit, container)[1] == "dict"

    def _holds(self, container: cst.BaseExpression, value: Value, entry: str | None = None) -> None:
        """`svs.append(sv)`: a local list's value carries the history of its items, as a display's
        does; `norms[group] = sq` a local dict's, its tensors too, which `norms.items()` hands out;
        and when summarising, a list's tensors too, so that a helper returning the masks it
        appended detached says it returns tensors without a graph. (What a list of a batch's
        inputs captures is judged as before: only its history.) A dict whose entries are known
        (`out = {"loss": loss}`) keeps them, the entry written by its key (`out["emb"] = emb`)
        replaced."""
        if type(container) is cst.Name and container.value in self.env and not self.replaying:
            current = self.env[container.value]
            joined = current.join(replace(value, keys=None))
            if current.keys is not None and entry is not None:
                kept = tuple((k, v) for k, v in current.keys if k != entry)
                joined = replace(joined, keys=(*kept, (entry, value)))
            self.env[container.value] = joined

    def _accumulate(
        self,
        node: cst.CSTNode,
        target: cst.BaseExpression,
        value: Value,
        value_expr: cst.BaseExpression,
        via: str | None = None,
        appended: bool = False,
        for_the_run: bool = False,
    ) -> None:
        if self._judged_at_calls(value) or self._replayed_at_calls(node):
            return
        if not self.loops and self._detached_each_call(target):
            return  # `self.sums.detach_()`: each call's graph is cut, not chained onto the last one's
        if not self.grad_enabled or through_data(target):
            # Arithmetic under `no_grad` records no history, and neither does arithmetic on what
            # `.data` hands out (`self.weight.data -= delta`).
            value = value.without_graph()
        node, via = self.report_at or node, via or self.replay_via
        loops = tuple(self.loops)
        fresh = self._reset_in(target)
        self.facts.accumulations.append(
            Accumulation(node, self.unit, target, value, value_expr, loops, via, fresh, appended, for_the_run)
        )

    def _popped_in(self, loop: cst.For | cst.While, root: str) -> bool:
        """Whether the loop's body takes items off the container (`pop`, `popleft`) as well."""
        return any(
            callee_name(call) in ("pop", "popleft")
            and (owner := receiver(call)) is not None
            and dotted_name(owner) == root
            for call in loop_calls(self.unit, loop)
        )

    def _first_call_only(self, test: cst.BaseExpression) -> bool:
        """`self.timesteps == 0` where the class only counts `self.timesteps` up: true on one call."""
        if type(test) is not cst.Comparison or len(test.comparisons) != 1 or self.unit.cls is None:
            return False
        compared = test.comparisons[0]
        counter = dotted_name(test.left) if self_attribute(self.unit, test.left) is not None else None
        if type(compared.operator) is not cst.Equal or type(compared.comparator) is not cst.Integer or counter is None:
            return False
        writes = [
            node
            for cls in lineage(self.index.classes, self.unit.cls)
            for node in walk(cls.node)
            if type(node) in (cst.Assign, cst.AugAssign) and counter in _written_names(node)
        ]
        counted = [node for node in writes if type(node) is cst.AugAssign and type(node.operator) is cst.AddAssign]
        return bool(counted) and all(type(node) is cst.AugAssign or _in_init(node, self.unit.cls) for node in writes)

    def _detached_each_call(self, target: cst.BaseExpression) -> bool:
        """Whether the function's body detaches `target` in place (`self.sums.detach_()`) in a
        statement of its own, outside any branch: every call cuts the history there."""
        name = dotted_name(target)
        body = getattr(self.unit.node, "body", None)
        if name is None or type(body) is not cst.IndentedBlock:
            return False
        for statement in _always_run(body.body):
            small = statement.body[0] if type(statement) is cst.SimpleStatementLine else None
            call = small.value if type(small) is cst.Expr else None
            detached = receiver(call) if type(call) is cst.Call and callee_name(call) == "detach_" else None
            if detached is not None and dotted_name(detached) == name:
                return True
        return False

    def _judged_at_calls(self, value: Value) -> bool:
        """Whether a function that a loop over batches calls keeps what its caller passed: its
        summary reports that at each call (`record(history, loss)`), with the caller's names."""
        return self.unit.called_per_batch and self.arguments is None and self.report_at is None and bool(value.sources)

    def _replayed_at_calls(self, node: cst.CSTNode) -> bool:
        """Whether a method that a loop calls once per batch stores only into what its caller passed
        (`self._keep(out, nodes, layer)` running `out[nodes] = layer(x)`): its summary runs that
        statement at each call, where it is reported with the caller's names."""
        unit = self.unit
        if not (unit.is_method and unit.called_per_batch and self.arguments is None and self.report_at is None):
            return False
        params = {p.name.value for p in unit.argument_params}
        return any(
            node is statement or (type(statement) is cst.Expr and node is statement.value)  # `outputs.append(v)`
            for statement in _argument_statements(unit, params)
        )

    def _reset_in(self, target: cst.BaseExpression) -> frozenset[int]:
        """The loops in whose current iteration the target's root was assigned afresh, on every path."""
        root = root_name(target)
        return frozenset(
            id(loop.node) for loop, fresh in zip(self.loops, self.iteration_fresh, strict=True) if root in fresh
        )

    def _note_assigned(self, target: cst.BaseExpression, value_expr: cst.BaseExpression) -> None:
        """`loss = criterion(...)` in a loop body: the name starts afresh in this iteration."""
        if not self.iteration_fresh:
            return
        # `loss = loss + aux` keeps a name fresh if it was: its history still starts in this iteration.
        if accumulated_operand(target, value_expr) is None and concatenated_operand(target, value_expr) is None:
            self.iteration_fresh[-1] |= target_names(target)

    def _kept_references(self, expr: cst.BaseExpression) -> set[str]:
        """Names whose values an expression passes on, not those it reduces to Python numbers."""
        if evaluate(expr, self).scalar:
            return set()
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return references(expr)
        kept: set[str] = set()
        for child in children(expr):
            if isinstance(child, cst.BaseExpression):
                kept |= self._kept_references(child)
            elif isinstance(child, (cst.Arg, cst.Element, cst.DictElement)):
                kept |= self._kept_references(child.value)  # `return ids, float(score)`: `ids` only
            else:
                kept |= references(child)
        return kept

    def _assign(
        self, target: cst.BaseExpression, value_expr: cst.BaseExpression, value: Value, node: cst.CSTNode
    ) -> None:
        grown_by = concatenated_operand(target, value_expr)
        if grown_by is not None:
            # `self.obs = torch.cat((a, b))`, then `self.obs = torch.cat((self.obs, c))`: built in this call
            grows = type(target) is not cst.Attribute or not self._rebound_in_this_call(target)
            self._store(node, target, evaluate(grown_by, self), grown_by, grows=grows, concatenates=True)
        added = list_extension(target, value_expr)
        if added is not None:  # `xs = xs + [h]`, `xs = [*xs, h]`: stored as by `xs.append(h)`
            items = [e.value for e in added.elements if type(e) is not cst.StarredElement]
            kept = _join_values([evaluate(item, self) for item in items])
            self._escape(kept, "stored in a container", target)
            self._store(node, target, kept, added, grows=True)
            if type(target) is cst.Name:
                self._bind(target, value)
            return
        if type(target) is cst.Name:
            other = accumulated_operand(target, value_expr)
            if other is not None:
                self._accumulate(node, target, evaluate(other, self), other)
            elif self.loops and target.value in self.loops[-1].refined:
                self._accumulate(node, target, value, value_expr)  # a sampler's state, rebuilt from itself each step
            if target.value in self.unit.declared_global:
                self._escape(value, f"stored in the global `{target.value}`")
            if value == UNKNOWN and names_a_loss_value(target.value) and self._given_graph(value_expr):
                # `loss = losses.dice(out, y)`: a call the file cannot see into, given a graph, and
                # its result named a loss; what a loss is computed from, it carries.
                value = GRAPH if self.grad_enabled else TENSOR
            if value == UNKNOWN and _wraps(value_expr, target.value) and (before := self.lookup(target.value)).module:
                value = before  # `model = cuda(model)`, `model = ddp(model)`: the same network, wrapped or moved
            # `output = self.train_step(batch)` before `output["loss"].backward()` holds the graph;
            # `output = {k: v.item() ...}` after it does not
            unproduced = target.value in self.unit.graph_holders and not _produced(value_expr)
            self._note_own_item(target.value, value_expr, node)
            if _local_scope_of(value_expr, "local_var"):
                self.own_graphs.add(target.value)
            else:
                self.own_graphs.discard(target.value)
            self._bind(target, value, drops_graph=_drops_graph(value_expr) or unproduced)
        elif isinstance(target, (cst.Tuple, cst.List)):
            if type(value_expr) is cst.Call and (through := passed_through(value_expr)) is not None:
                value_expr = through  # `logits, labels = accelerator.gather((logits, labels))`: each its own
            values = value_expr.elements if isinstance(value_expr, (cst.Tuple, cst.List)) else []
            made_by = value_expr
            if type(value_expr) is cst.Name and len(bound := self.unit.bindings.get(value_expr.value, [])) == 1:
                made_by = bound[0]  # `scored = self._score(x)`, then `nll, n = scored`
            elements = self.summarized_elements(made_by) if type(made_by) is cst.Call else None
            # `x, H, W = stage(x, H, W)`, `x, (Hp, Wp) = self.patch_embed(x)`: a stage's output and
            # the image's new height and width (only a value with a graph is split so, below)
            sizes = spatial_sizes([n.value for n in walk(target) if type(n) is cst.Name]) if value.graph else set()
            if len(values) == len(target.elements):  # a, b = A(), [] binds pairwise
                for element, item in zip(target.elements, values, strict=True):
                    self._assign(element.value, item.value, evaluate(item.value, self), node)
            elif len(target.elements) == 2 and _values_and_indices(value_expr):
                # `top, idx = torch.topk(s, k)`: the values keep the input's graph, the indices are integers
                self._bind(target.elements[0].value, value)
                self._bind(target.elements[1].value, TENSOR if value.tensor else value)
            elif elements is not None and len(elements) == len(target.elements):  # x, pad = helper(x)
                for element, known in zip(target.elements, elements, strict=True):
                    self._bind(element.value, known)
            elif known_elements := self._forward_without_graph(value_expr, len(target.elements)):
                for position, element in enumerate(target.elements):  # loss, acc = model(x)
                    known = TENSOR if value.graph and _names_an_accuracy(element.value) else value
                    self._bind(element.value, known_elements.get(position, known))
            elif value.graph and (
                any(
                    _names_a_count(e.value) or _names_a_log(e.value) or _names_an_accuracy(e.value)
                    for e in target.elements
                )
                or sizes
                or _rewards_beside_a_loss(target, value_expr)
            ):
                for element in target.elements:
                    # `scores, decode_lengths = decoder(x)`: the lengths are ints; `loss, log_vars =
                    # model(x)`: the log is the numbers reported (`.item()`), the loss keeps the graph;
                    # `loss, kl, word_acc = model(batch)`: an accuracy is counted from comparisons;
                    # `loss, chosen_rewards, rejected_rewards = self._loss_fn(...)`: a preference
                    # loss's rewards are reported detached (DPO's, in TRL, torchtune, OpenRLHF)
                    if _names_a_count(element.value) or (
                        type(element.value) is cst.Name and element.value.value in sizes
                    ):
                        self._bind(element.value, SCALAR)
                    elif _names_an_accuracy(element.value) or (
                        _names_a_reward(element.value) and _rewards_beside_a_loss(target, value_expr)
                    ):
                        self._bind(element.value, TENSOR)
                    elif isinstance(element.value, (cst.Tuple, cst.List)) and sizes:
                        for inner in element.value.elements:  # `(Hp, Wp)`
                            self._bind(
                                inner.value,
                                SCALAR if type(inner.value) is cst.Name and inner.value.value in sizes else value,
                            )
                    else:
                        self._bind(element.value, UNKNOWN if _names_a_log(element.value) else value)
            else:
                self._bind(target, value)
        elif type(target) is cst.Attribute:
            other = accumulated_operand(target, value_expr)
            rebound = self._rebound_in_this_call(target)
            self._note_rebound(target, value_expr)
            if other is not None and not rebound:
                self._accumulate(node, target, evaluate(other, self), other)
            elif (
                self_attribute(self.unit, target) is not None
                and grown_by is None
                and not rebound
                and self._computed_from(value_expr, target)
                and not _moved(value_expr, target)
                and not _windowed(value_expr, target)
            ):
                # `self.ema = 0.9 * self.ema + 0.1 * x`, `self.peak = torch.max(self.peak, x)`, or
                # `h_in = self.h * masks; ..., h = self.net(x, h_in); self.h = h`: the new value is
                # computed from the old one, so a graph in it chains onto the old one every call.
                self._accumulate(node, target, value, value_expr)
            elif grown_by is None and not (rebound and self._written_with_graph(target)):
                write = AttributeWrite(self.report_at or node, self.unit, target, value, value_expr, tuple(self.loops))
                self.facts.attribute_writes.append(write)
            self._store_attribute(target, value)
            self._setter_effects(node, target, value_expr)
            if (path := self._path_key(target)) is not None:
                # read back on this path (`self.state.output = out`, then `self.state.output["loss"]`);
                # what was set below the attribute is set no more
                self.env = {k: v for k, v in self.env.items() if not k.startswith(f"{path}.")}
                self.env[path] = value
        elif type(target) is cst.Subscript:
            if self.facts.is_numpy_array(self.unit, target.value):
                return  # `self.q_values[idx] = reward`: NumPy stores the number, not the tensor
            repeated = bool(self.loops) or self.unit.called_per_batch
            if text_key(target) is None and (  # (`inputs["radius"] = r`: an entry of a mapping, not storage)
                self._writes_into_buffer(target.value)
                or (repeated and self._made_tensor(target.value))
                or self._fills_own_tensor(target)
                or self._writes_into_item(target.value)
            ):
                # `self.queue[ptr] = k`, `self.sv[:] = sv`, `preds[i * bs:] = out` into `torch.zeros(...)`
                # made before the loop: a write into the tensor's storage, which autograd chains onto
                # the tensor's history like `copy_`; no entry is added.
                if value.graph and self.grad_enabled:
                    self._accumulate(node, target.value, value, value_expr)
                return
            self._escape(value, "stored in a container", target.value)
            slot = _slot(target)
            if not _reads(value_expr, target):
                self.fresh.add(slot)  # `g.edata["a"] = attention(...)`: the slot starts afresh in this call
                if self.iteration_fresh:
                    self.iteration_fresh[-1].add(slot)
            elif slot not in (
                self.iteration_fresh[-1] if self.iteration_fresh else self.fresh
            ) and not self._owned_graph(root_name(target)):
                # `avg[k] = (avg[k] * n + v) / (n + 1)`: the slot is computed from itself, so a graph in
                # `v` chains onto it, call after call (an accumulation, not an entry added), unless
                # this call (this iteration, in a loop) set it afresh first: `g.edata["a"] = g.edata["a"] * w`.
                self._accumulate(node, target, value, value_expr)
            index = target.slice[0].slice if len(target.slice) == 1 else None
            key = self._key(index.value) if type(index) is cst.Index else None
            grows = self._grows_by_key(target, value_expr)
            self._store(node, target.value, value, value_expr, grows, key=key, entry=text_key(target))
            self._setitem_effects(node, target, value_expr)

    def _computed_from(self, expr: cst.BaseExpression, part: cst.BaseExpression, callers: bool = True) -> bool:
        """Whether `expr` reads `part`, or a name this function assigns from it, however many
        assignments away (tuple targets included), unless detached on the way (`h = self.h.detach()`);
        for a parameter, what the method's callers on the same object pass there (`self._keep(h)`)."""
        if _reads(expr, part):
            return True
        looped = self._step_called_in_a_loop() and not self._made_again_elsewhere(part)
        if self._forward_code() or not (runs_per_batch(self.unit) or looped):
            # Only where a loop the code shows repeats the call (a rollout's `act`): a module's caches
            # across its calls (`self.cached_h = h`) are TL010's to judge, and a method repeated by
            # its name alone (`update`) may run under a caller's `no_grad` the file does not show.
            return False
        params = [p.name.value for p in self.unit.argument_params]
        if callers and self.unit.self_name is not None and (passed := names_in(expr) & set(params)):
            for call, caller in self.unit.call_sites:
                given = arguments_by_position(call, self.unit)
                if caller.self_name == self.unit.self_name and any(
                    (arg := given.get(params.index(name))) is not None
                    and _Walker(self.facts, caller)._computed_from(arg, part, callers=False)
                    for name in passed
                ):
                    return True
        return self._flows_from(expr, part)

    def _flows_from(self, expr: cst.BaseExpression, part: cst.BaseExpression) -> bool:
        """Whether `expr` reads `part` or a name this function assigns from it, however many
        assignments away, unless detached on the way: the function's own code, not its callers."""
        if _reads(expr, part):
            return True
        if self._assigned_from is None:
            self._assigned_from = {}
            body = getattr(self.unit.node, "body", None)
            for written, value, _ in value_flows(own_nodes(body) if body is not None else ()):
                for name in written:  # assigned, iterated (`for v in top`) or appended (`kept.append(v)`)
                    self._assigned_from.setdefault(name, []).append(value)
        seen: set[str] = set()
        todo = list(names_in(expr))
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for value in self._assigned_from.get(name, ()):
                if same_code(value, part):
                    continue  # `h = self.h` on a path that keeps it: the same tensor, nothing chained
                read = _read_with_history(value)
                if any(type(node) is type(part) and same_code(node, part) for node in read):
                    return True
                todo.extend(node.value for node in read if type(node) is cst.Name)
        return False

    def _rebound_in_this_call(self, target: cst.BaseExpression) -> bool:
        """Whether `self.x = f(self.x)` (or `self.x += v`) folds into what this call already set the
        attribute to, outside loops (`self.emb = self.table(ids)`, then `self.emb = self.norm(self.emb)`):
        one call's graph, not a chain across calls (a loop's iterations: `iteration_fresh`)."""
        name = dotted_name(target)
        if self.loops:
            return False
        if name in self.rebound:
            return True
        # `self.x = x; self._normalize()` in forward, for the `self.x = f(self.x)` in `_normalize`:
        # every repeating caller set it afresh before the call
        at_calls = [self.facts.rebound_at_calls.get(id(call)) for call, _ in self.unit.call_sites]
        return bool(at_calls) and all(rebound is not None and name in rebound for rebound in at_calls)

    def _written_with_graph(self, target: cst.Attribute) -> bool:
        """Whether this function already wrote a value with a graph to the attribute: that write
        stands for what the call keeps there, a later one refolding it adds nothing to report."""
        name = dotted_name(target)
        return any(
            write.unit is self.unit and write.value.graph and dotted_name(write.target) == name
            for write in self.facts.attribute_writes
        )

    def _note_rebound(self, target: cst.Attribute, value_expr: cst.BaseExpression) -> None:
        """`self.x = v` sets the object's attribute afresh where `v` does not come from it."""
        name = dotted_name(target)
        if name is None or self_attribute(self.unit, target) is None:
            return
        if accumulated_operand(target, value_expr) is None and not self._flows_from(value_expr, target):
            self.rebound.add(name)
        elif not self._rebound_in_this_call(target):
            self.rebound.discard(name)

    def _step_called_in_a_loop(self) -> bool:
        """A step method (`training_step`) that a loop of the file calls (a decoder's steps, one
        per iteration): each call reads the state the previous one left."""
        if self._looped_step is None:
            name = self.unit.name
            self._looped_step = Role.STEP in self.unit.roles and any(
                place.loops and callee_name(call) == name
                for unit in self.index.units
                if unit is not self.unit
                for call, place in placed(unit, cst.Call)
            )
        return self._looped_step

    def _made_again_elsewhere(self, part: cst.BaseExpression) -> bool:
        """Whether another method than `__init__` assigns the attribute afresh (theseus's
        `reset_sigma()`, run once per optimisation around the steps that chain it): how often is
        not the file's to tell."""
        attribute = self_attribute(self.unit, part)
        cls = self.unit.cls
        if attribute is None or cls is None:
            return False
        return any(
            unit.name != "__init__" and unit is not self.unit
            for c in lineage(self.index.classes, cls)
            for _, unit in c.attribute_values.get(attribute, [])
        )

    def _given_graph(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is a call given an argument that carries a graph."""
        return type(expr) is cst.Call and any(evaluate(arg.value, self).graph for arg in expr.args)

    def _writes_into_buffer(self, expr: cst.BaseExpression) -> bool:
        """Whether forward code writes into `expr`, a tensor the class makes itself (`torch.zeros(...)`
        assigned or registered as a buffer), not a dict or list of tensors nor a tensor it is given.
        Only forward code: what a per-step `update` or `__call__` is given may carry no graph (a
        grad scaler's new scale, a KV cache's keys in generation)."""
        attribute = self_attribute(self.unit, expr)
        cls = self.unit.cls
        if attribute is None or cls is None or not self._forward_code():
            return False
        family = attribute_family(self.index.classes, cls, attribute)
        made = [value for c in family for value, _ in c.attribute_values.get(attribute, [])]
        return self._made_by_calls(expr, made)

    def _forward_code(self) -> bool:
        """`forward`, a hook, or a method they call (`self.bank.update(idx, f)` in a loss's `forward`)."""
        forward = {Role.FORWARD, Role.MODULE_HOOK}
        return bool(forward & self.unit.roles.keys()) or called_from(
            self.unit, lambda u: bool(forward & u.roles.keys())
        )

    def _fills_own_tensor(self, target: cst.Subscript) -> bool:
        """`self.sv[i][:] = sv` in forward code: every element written, so the target is a tensor
        (a list's slice assignment would replace its items), and one that the object keeps."""
        if not self._forward_code() or not _is_whole_slice(target):
            return False
        root = root_name(target.value) or ""
        return self.unit.self_name is not None and root.startswith(f"{self.unit.self_name}.")

    def _writes_into_item(self, expr: cst.BaseExpression) -> bool:
        """`self.sums[key][ids] = v` into a dict that every assignment makes of tensors
        (`{name: torch.zeros(n) for name in names}`): a write into the item's storage."""
        if type(expr) is not cst.Subscript:
            return False
        base = expr.value
        attribute = self_attribute(self.unit, base)
        cls = self.unit.cls
        if attribute is not None and cls is not None:
            made = [
                v
                for c in attribute_family(self.index.classes, cls, attribute)
                for v, _ in c.attribute_values.get(attribute, [])
            ]
        elif type(base) is cst.Name:
            made = self.unit.lookup_bindings(base.value)
        else:
            return False
        return bool(made) and all(_dict_of_made_tensors(value, self.imports) for value in made)

    def _made_tensor(self, expr: cst.BaseExpression) -> bool:
        """A name (of this function or one around it) that every assignment makes a tensor by a call
        (`torch.zeros(n, k)`)."""
        return type(expr) is cst.Name and self._made_by_calls(expr, self.unit.lookup_bindings(expr.value))

    def _made_by_calls(self, expr: cst.BaseExpression, made: list[cst.BaseExpression]) -> bool:
        """Whether `expr`, assigned `made`, is a tensor that every assignment builds by a call."""
        return bool(made) and all(type(value) is cst.Call for value in made) and evaluate(expr, self).tensor

    def _setitem_effects(self, node: cst.CSTNode, target: cst.Subscript, value_expr: cst.BaseExpression) -> None:
        """`stats["loss"] = loss` on an object whose class defines `__setitem__`: its effects, here."""
        owner = evaluate(target.value, self).instance
        known = self.facts.class_of(owner) if owner else None
        index = target.slice[0].slice if len(target.slice) == 1 else None
        if known is None or type(index) is not cst.Index:
            return
        facts, cls = known
        method = next(
            (c.methods["__setitem__"] for c in lineage(facts.index.classes, cls) if "__setitem__" in c.methods), None
        )
        if method is not None:
            call = cst.Call(
                cst.Attribute(target.value, cst.Name("__setitem__")), [cst.Arg(index.value), cst.Arg(value_expr)]
            )
            self._helper_effects(call, facts, facts.index.method_units[id(method)], report_at=node)

    def _setter_effects(self, node: cst.CSTNode, target: cst.Attribute, value_expr: cst.BaseExpression) -> None:
        """`self.last_logits = logits` on an object whose class defines `@last_logits.setter`: the
        assignment calls the setter, so what it does with the value (an append) happens here."""
        owner = evaluate(target.value, self).instance
        known = self.facts.class_of(owner) if owner else None
        if known is None:
            return
        facts, cls = known
        for where, ancestor in _ancestors_across(facts, cls):
            setter = ancestor.setters.get(target.attr.value)
            if setter is not None:
                call = cst.Call(target, [cst.Arg(value_expr)])
                self._helper_effects(call, where, where.index.method_units[id(setter)], report_at=node)
                return

    def _collected_over_data(self, small: cst.BaseSmallStatement) -> None:
        """Comprehensions over a loader whose elements carry a graph: every batch's history, at once."""
        found = [n for n in walk(small) if isinstance(n, _COMPREHENSIONS) and id(n) in self.data_comprehensions]
        if not found:
            return
        into: set[str] = set()
        if type(small) is cst.Assign:
            into = {name for t in small.targets for name in target_names(t.target)}
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            into = target_names(small.target)
        for node in found:
            if type(node) is cst.GeneratorExp and not _gathered(node, small):
                continue  # consumed one element at a time: each batch's graph goes with it
            element = node.value if isinstance(node, cst.DictComp) else node.elt
            if evaluate(element, self).graph:
                self.facts.collected.append(Collected(node, self.unit, frozenset(into)))

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self._effects(node.value)
        value = evaluate(node.value, self)
        target = node.target
        if isinstance(node.value, (cst.List, cst.Tuple)) and type(node.operator) is cst.AddAssign:
            # `xs += [v]` extends a list; a Store, like xs.extend([v]).
            self._escape(value, "stored in a container", target)
            self._store(node, target, value, node.value, grows=True)
        elif (
            type(node.operator) is cst.AddAssign and type(target) is cst.Name and self.facts.is_list(self.unit, target)
        ):
            # `hypotheses += current_hypotheses`: a list extended by the items of another
            self._store(node, target, self._item(node.value), node.value, grows=True)
        elif not (type(target) is cst.Attribute and self._rebound_in_this_call(target)):
            self._accumulate(node, target, value, node.value)
        if type(target) is cst.Name:
            current = self.lookup(target.value)
            joined = current.join(value)
            self.env[target.value] = Value(
                tensor=joined.tensor, graph=joined.graph and self.grad_enabled, scalar=joined.scalar
            )
        elif (path := self._path_key(target)) is not None:
            self.env.pop(path, None)  # `self.total += loss`: as the class sets it

    def _bind(self, target: cst.BaseExpression, value: Value, *, drops_graph: bool = False) -> None:
        if type(target) is cst.Name:
            name = target.value
            # `loss.backward()` elsewhere in the function: whatever `loss` is bound to has a graph,
            # unless this assignment drops it (`loss = loss.detach()`).
            promote = not (value.scalar or value.module or drops_graph)
            if name in self.unit.graph_evidence and self.grad_enabled and promote and self._backpropagated_here(name):
                if not value.graph and self.loops:
                    # backpropagated in this iteration: a graph made in it, whatever the call was
                    self.facts.graph_loops.update(id(loop.node) for loop in self.loops)
                # (a dict whose entries say which has the graph keeps them: `res["loss"].backward()`
                # beside `res["n"]`, a count)
                value = value if any(entry.graph for _, entry in value.keys or ()) else GRAPH
            self.env[name] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = element.value
                # (the items of numbers are numbers: `loss, acc = meter.get_stats()`, `-> list[float]`)
                self._bind(
                    inner, Value(tensor=value.tensor, graph=value.graph, module=value.module, scalar=value.scalar)
                )
        elif type(target) is cst.StarredElement:
            self._bind(target.value, UNKNOWN)

    def _backpropagated_here(self, name: str) -> bool:
        """Whether a `backward()` on `name` runs in the loop that binds it (or in one around it, or
        outside every loop): an evaluation loop's `loss = outputs.loss` is not the `loss` that the
        training loop beside it backpropagates."""
        if self._backward_loops is None:
            calls = {id(call): place.loops for call, place in placed(self.unit, cst.Call)}
            self._backward_loops = {
                evidence: [calls.get(id(call), ()) for call in backward_calls]
                for evidence, backward_calls in self.unit.graph_evidence.items()
            }
        around = {id(loop.node) for loop in self.loops}
        return any(not loops or id(loops[-1]) in around for loops in self._backward_loops.get(name, []))

    def _key(self, key: cst.BaseExpression) -> Value:
        """The value a container entry is looked up by. Nothing known for the object's own state
        (`self._tensor`, or a name bound only to it), which lives as long as the object, for a
        parameter named as a label (`device`, `training`), and for keys built from fields or as
        tuples (`r.id`, `(names, layout)`): evidence of a tensor there is only that they were read off one."""
        bound = self.unit.bindings.get(key.value, []) if type(key) is cst.Name else [key]
        if bound and all(self_attribute(self.unit, value) is not None for value in bound):
            return UNKNOWN
        labels = {p.name.value for p in self.unit.params if not _key_space_grows(p)}
        if type(key) is cst.Name and key.value in labels:
            return UNKNOWN  # `cache[device] = t`, `coordinators[training] = c`: a label, not a tensor made per call
        if any(_field_or_tuple(value) for value in bound):
            return UNKNOWN
        return evaluate(key, self)

    def _grows_by_key(self, target: cst.Subscript, value_expr: cst.BaseExpression) -> bool:
        """Whether `d[key] = v` adds an entry on each call or iteration: a new key, not a slot
        of a list (which only replaces an item) nor the slot the value reads (`xs[i] = f(xs[i])`)."""
        a_list = self.facts.is_list(self.unit, target.value)
        if a_list or self.facts.slots_by_index(self.unit, target.value):
            # A slot replaces an item, unless a counter fills a list of placeholders, one per step:
            # `history[step] = loss` with `history = [None] * steps` and `step += 1`.
            index = target.slice[0].slice if len(target.slice) == 1 else None
            return (
                type(index) is cst.Index
                and (not a_list or self.facts.preallocated(self.unit, target.value))
                and (self._counted(index.value) or self._counted_in_loop(index.value))
            )
        if any(type(node) is cst.Subscript and same_code(node, target) for node in walk(value_expr)):
            return False
        # `d[k] = d.get(k, 0) + v` (or through `prev = d.get(k)`) folds a graph into the entry, which
        # chains call after call whatever the keys; a network's output keys bound only the entries.
        read = [value_expr, *(v for n in names_in(value_expr) for v in self.unit.bindings.get(n, ()))]
        folds = any(_reads(expr, target.value) for expr in read) and evaluate(value_expr, self).graph
        for element in target.slice:
            index = element.slice
            if type(index) is not cst.Index:
                return False  # a slice writes into existing storage
            if self._varies(index.value, module_output_keys=not folds) or _reads(index.value, target.value):
                return True  # `d[len(d)] = v`: a key computed from the container is new each time
            if self._counted(index.value) or self._counted_in_loop(index.value):
                return True  # `self.features[self.calls] = f` with `self.calls += 1`: a new key per call
        return False

    def _counted_in_loop(self, key: cst.BaseExpression) -> bool:
        """Whether a key is a counter that the loops around count up (`step += 1`), or that a
        function called once per batch counts up in its enclosing function (`nonlocal step`)."""
        if type(key) is not cst.Name:
            return False
        around = {id(loop.node) for loop in self.loops}
        outer = self.unit.called_per_batch and key.value in self.unit.declared_nonlocal | self.unit.declared_global
        return any(
            type(node.target) is cst.Name
            and node.target.value == key.value
            and type(node.operator) is cst.AddAssign
            and (outer or any(id(loop) in around for loop in place.loops))
            for node, place in placed(self.unit, cst.AugAssign)
        )

    def _counted(self, key: cst.BaseExpression) -> bool:
        """Whether a key is an attribute that its class only counts up (`self.step += 1`), never
        wraps or resets outside `__init__` (a ring buffer's `self.ptr = 0`, `self.ptr %= n`): of
        `self`, or of an object whose class the code shows (`self.owner.calls` in a hook's helper)."""
        if type(key) is not cst.Attribute:
            return False
        attribute = key.attr.value
        owner = evaluate(key.value, self).instance if self_attribute(self.unit, key) is None else None
        known = self.facts.class_of(owner) if owner else ((self.facts, self.unit.cls) if self.unit.cls else None)
        if known is None or known[0] is not self.facts:
            return False
        classes = lineage(self.index.classes, known[1])
        if any(unit.name != "__init__" for c in classes for _, unit in c.attribute_values.get(attribute, [])):
            return False
        operators = [
            type(node.operator)
            for c in classes
            for method in c.methods.values()
            if (unit := self.index.method_units.get(id(method))) is not None
            for node, _ in placed(unit, cst.AugAssign)
            if self_attribute(unit, node.target) == attribute
        ]
        return bool(operators) and all(op is cst.AddAssign for op in operators)

    def _varies(self, key: cst.BaseExpression, module_output_keys: bool = True, *, callers_up: int = 3) -> bool:
        """Whether a key expression changes from call to call or iteration to iteration (the keys
        of a network's output do not, with `module_output_keys`). A parameter named as a label
        (`key`) takes what the callers pass: `self._keep(key, h)` after `key = tuple(ids.tolist())`.
        A key drawn anew by each call varies too: `next(self._ids)`, `uuid.uuid4()`."""
        bound = self.unit.bindings.get(key.value, []) if type(key) is cst.Name else []
        if any(_drawn_anew(expr) for expr in [key, *bound]):
            return True
        params = {p.name.value for p in self.unit.argument_params if _key_space_grows(p)}
        if Role.MODULE_HOOK in self.unit.roles and self.unit.node is not None:
            # The module a hook is given is fixed per registration; its tensors are new each call.
            hook_params = [p.name.value for p in self.unit.params][self.unit.skip_params :]
            params -= set(hook_params[:1])
        loop_targets = {name for loop in self.loops for name in loop.assigned}
        loop_targets -= self._fixed_in_loops(params | loop_targets)
        loop_targets -= {
            name
            for loop in self.loops
            if type(loop.node) is cst.For
            for name in _fixed_targets(loop.node.iter, loop.node.target, self.unit) | self._fixed_by_callers(loop.node)
        }
        for loop in self.loops:  # `for etype in g.canonical_etypes`: the same keys on every call
            if type(loop.node) is cst.For and (
                (
                    not loop.feeds_data
                    and (
                        _fixed_collection(loop.node.iter, self.unit)
                        or _names_a_state_dict(loop.node.iter, self.unit)  # a model's parameter names
                        or (module_output_keys and self._keys_of_module_output(loop.node.iter))
                        or self._made_from_own_state(loop.node.iter)
                    )
                )
                # the object's own groups, each trained in turn (`for group in self.group_keys:
                # ...; loss.backward()`): its keys, not batches
                or self_attribute(self.unit, loop.node.iter) is not None
            ):
                loop_targets -= target_names(loop.node.target)
            elif (
                module_output_keys
                and type(loop.node) is cst.For
                and (not loop.feeds_data or self._views_own_dict(loop.node.iter))
            ):
                # `for k, v in infos.items()`: a dict's keys, its fixed names (unless the entries fold a
                # graph); `for group, n in self.agents.items()` also in a loop that trains each in turn
                loop_targets -= _dict_key_target(loop.node)
        names = _identity_names(key)
        if names & (params | loop_targets):
            return True
        local = {n for n in names if n in self.unit.bindings}
        if any(
            _identity_names(value) & (params | loop_targets) for name in local for value in self.unit.bindings[name]
        ):
            return True
        read = names | {n for name in local for value in self.unit.bindings[name] for n in _identity_names(value)}
        return bool(callers_up) and any(
            self._passed_varying(position, callers_up - 1)
            for position, p in enumerate(self.unit.argument_params)
            if p.name.value in read and p.name.value not in params
        )

    def _fixed_by_callers(self, loop: cst.For) -> set[str]:
        """The targets of a loop over a parameter that the calls in the file give as a table whose
        column is fixed: `loss_name` in `for loss_name, fn in loss_fn_list` after
        `self.step(batch, [("l1_loss", l1_loss)])` or `[(self.hparams.train_loss, fn)]`."""
        iterable, names = loop.iter, [p.name.value for p in self.unit.argument_params]
        if type(iterable) is not cst.Name or iterable.value not in names or iterable.value in self.unit.bindings:
            return set()
        position = names.index(iterable.value)
        fixed: set[str] | None = None
        for call, caller in self.unit.call_sites:
            given = arguments_by_position(call, self.unit).get(position)
            if given is not None:
                targets = _fixed_targets(given, loop.target, caller)
                fixed = targets if fixed is None else fixed & targets
        return fixed or set()

    def _made_from_own_state(self, iterable: cst.BaseExpression) -> bool:
        """`self.names()`, `_sync(self.names())`: what the object's own state gives, the same names
        on every call (the statistics it collects, not the call's inputs)."""
        if self_attribute(self.unit, iterable) is not None:
            return True
        if type(iterable) is not cst.Call:
            return False
        if not iterable.args:
            func = iterable.func  # `self.names()`
            return (
                type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == self.unit.self_name
            )
        return all(self._made_from_own_state(arg.value) for arg in iterable.args)

    def _views_own_dict(self, iterable: cst.BaseExpression) -> bool:
        """`self.groups.items()`: a view of a dict the object keeps, whose keys are its own."""
        return (
            type(iterable) is cst.Call
            and type(iterable.func) is cst.Attribute
            and self_attribute(self.unit, iterable.func.value) is not None
        )

    def _passed_varying(self, position: int, callers_up: int) -> bool:
        """Whether a call of this function in the file passes, at `position`, a key that varies
        where the call is made (judged there; a caller's own label parameter, up to `callers_up`
        callers further)."""
        for call, caller in self.unit.call_sites:
            given = arguments_by_position(call, self.unit).get(position)
            if given is not None and _Walker(self.facts, caller)._standing_at(call)._varies(
                given, callers_up=callers_up
            ):
                return True
        return False

    def _standing_at(self, call: cst.Call) -> _Walker:
        """This walker inside the loops around `call`, as when its walk reaches it: the names those
        loops assign vary there as they do in the loops' own body."""
        place = next((where for node, where in placed(self.unit, cst.Call) if node is call), None)
        if place is not None:
            self.loops = [self._loop_info(loop) for loop in place.loops]
        return self

    def _keys_of_module_output(self, iterable: cst.BaseExpression) -> bool:
        """`feats.items()` after `feats = self.extractor(x)`: what a network returns is keyed by its
        own layer or head names, the same on every call; so is what a loss returns
        (`losses.intermediate.items()` after `losses = model.compute_loss(batch)`)."""
        if not (_calls(iterable, "items") or _calls(iterable, "keys")):
            return False
        keyed = cast(cst.Attribute, cast(cst.Call, iterable).func).value
        while type(keyed) is cst.Attribute:
            keyed = keyed.value  # `out.losses.items()`: a field of the output
        return self._module_output(keyed)

    def _module_output(self, expr: cst.BaseExpression, callers_up: int = 2) -> bool:
        """Whether a name holds what a network or a loss returns (`feats = self.extractor(x)`,
        `losses = model.compute_loss(batch)`); for a parameter, what every call of the function in
        the file passes there (`self._smooth(loss_dict)` after `loss_dict = self.model(data)`), up to
        `callers_up` callers further."""
        if type(expr) is not cst.Name:
            return False
        bound = self.unit.bindings.get(expr.value)
        if bound:
            return all(
                type(value) is cst.Call
                and (
                    (self.attribute_of_self(value.func) or evaluate(value.func, self)).module
                    or (type(value.func) is cst.Attribute and is_model_name(value.func.attr.value))
                    or is_loss_name(callee_name(value) or "")
                )
                for value in bound
            )
        names = [p.name.value for p in self.unit.argument_params]
        if expr.value not in names or not callers_up or not self.unit.call_sites:
            return False
        position = names.index(expr.value)
        return all(
            (given := arguments_by_position(call, self.unit).get(position)) is not None
            and _Walker(self.facts, caller)._module_output(given, callers_up - 1)
            for call, caller in self.unit.call_sites
        )

    def _fixed_in_loops(self, varying: set[str]) -> set[str]:
        """Names the loops around assign only from values that read none of the `varying` names
        for what they are, never what they iterate over: `name = type(layer).__name__`."""
        iterated = {n for loop in self.loops if type(loop.node) is cst.For for n in target_names(loop.node.target)}
        return {
            name
            for loop in self.loops
            for name in loop.assigned - iterated
            if self.unit.bindings.get(name)
            and not any(_identity_names(value) & varying for value in self.unit.bindings[name])
        }

    # -- expressions with effects --------------------------------------------------------------

    def _effects(self, expr: cst.BaseExpression) -> None:
        """Record the stores, escapes and CUDA work of the calls inside an expression."""
        for node in calls_and_yields(expr):
            if isinstance(node, cst.Call):
                self._call(node)
            elif isinstance(node.value, cst.BaseExpression):  # not `yield from`
                self._escape(evaluate(node.value, self), "yielded")

    def _runs_a_network(self, call: cst.Call) -> bool:
        """`model.decode_step(memory, ys)`: a method of another object's network, which makes a new
        graph even from one made before the loop (not `self.split(h)`, a module's own helper)."""
        recv = receiver(call)
        return (
            recv is not None
            and not (type(recv) is cst.Name and recv.value == self.unit.self_name)
            and evaluate(recv, self).module
        )

    def _call(self, call: cst.Call) -> None:
        name = callee_name(call)
        recv = receiver(call)
        if self._hands_over_self(call, recv):
            # `self._step(batch)`, `callback.on_batch_end(self)`: what it sets on `self` is read anew
            self.env = {k: v for k, v in self.env.items() if "." not in k}
            if self.arguments is None and not self.loops:
                self.facts.rebound_at_calls[id(call)] = frozenset(self.rebound)
        if self.loops and id(self.loops[-1].node) not in self.facts.graph_loops:
            made = evaluate(call, self)
            if made.graph and (self._runs_a_network(call) or not any(evaluate(a.value, self).graph for a in call.args)):
                # `model(x)`, `criterion(...)`: a graph made in this iteration, in every loop around it
                self.facts.graph_loops.update(id(loop.node) for loop in self.loops)
        if self.arguments is None and type(call.func) is cst.Name and (inner := self.unit.defs.get(call.func.value)):
            # `walk_scores = []` before `compute_walk_score(...)` (in the same iteration, in a loop):
            # what the nested function fills there is this call's
            fresh = self.iteration_fresh[-1] if self.iteration_fresh else self.fresh
            self.facts.fresh_at_calls.setdefault(id(inner), []).append(frozenset(fresh))
        if self.loops and self.arguments is None and (nested := self._step_function_called(call)) is not None:
            # `for x in xs: _step(x)`: the function this one defines runs in these loops
            self.facts.loops_at_call.setdefault(id(nested), (tuple(self.loops), self.grad_enabled, self.unit))
        if (
            recv is not None
            and name in STORE_METHODS
            and not (type(recv) is cst.Name and self.imports.is_module(recv.value))  # `torch.add(a, b)`
            and self._callee_unit(call) is None  # not a helper's own `add`
        ):
            self._store_call(call, recv, name)
        if name in _IN_PLACE_UPDATES and recv is not None:
            self._in_place_update(call, recv)
        # Only a tensor, a closure or a hook's handle handed over can be kept: a helper is not read
        # for a call without one, and a helper of another module only for a graph, a closure or a
        # handle (most calls in library code hand over tensors: reading each callee's module for
        # them cost 4% of the time on a sample of torch and transformers).
        given = [evaluate(arg.value, self) for arg in call.args]
        if self.arguments is None:  # the walk of the unit itself, not a summary of it
            self.facts.argument_values.update(
                (id(arg.value), value) for arg, value in zip(call.args, given, strict=True)
            )
        handles = self.index.registers_hooks and any(hook_registration(arg.value, self.unit) for arg in call.args)
        if handles or any(value.graph or value.closure for value in given):
            callee = self._callee_unit(call, across_project=True)
            if callee is not None:
                self._helper_effects(call, *callee)
        elif (any(value.tensor or value.module for value in given) or self._hands_concatenated(call)) and (
            known := self._callee_unit(
                call, read_modules=(records := self._records(call, given)), across_project=records
            )
        ):
            # Tensors, or a network to make them with (`keep(outputs, model, batch)`): what the
            # file's own helper makes of them.
            self._helper_effects(call, *known)
        elif (
            self.loops and call.args and self._on_self(recv) and (known := self._callee_unit(call, read_modules=False))
        ):
            # `self._keep(predictions, x)` in a loop: the method may make the graph itself (`self.network(x)`)
            self._helper_effects(call, *known)
        elif any(value.exception for value in given) and (kept := self._exception_keeper(call)) is not None:
            self._helper_effects(call, *kept)
        if name is not None and (name.startswith("register") or name in REGISTRATIONS):
            self._registration(call, recv)
        cuda = self._cuda_work(call, name, recv) or self._cuda_work_elsewhere(call)
        if cuda is not None:
            self.facts.cuda_work.append(cuda)

    def _cuda_work_elsewhere(self, call: cst.Call) -> CudaWork | None:
        """`transforms.log_mel(wave)` in a dataset's `__getitem__`: a function of another module
        that moves tensors to CUDA (itself, or a function of its module that it calls), reported
        at the call, since only this module shows that workers run it."""
        known = self._callee_unit(call) if self.unit.worker_unit() is not None else None
        if known is None or known[0] is self.facts:
            return None
        found = _moves_to_cuda(*known)
        if found is None:
            return None
        path = known[0].path.name if known[0].path is not None else "its module"
        return CudaWork(
            call, self.unit, f"`{qualified_name(known[1])}` (`{cst.Module([]).code_for_node(found)}` in {path})"
        )

    def _hands_concatenated(self, call: cst.Call) -> bool:
        """`_keep(self.maps, error)`: a container whose items the code joins with torch holds
        tensors, whatever the value handed with it is known to be."""
        return any(root_name(arg.value) in self.index.concatenated for arg in call.args)

    def _records(self, call: cst.Call, given: list[Value]) -> bool:
        """`self.logger.log_stat("grad_norm", grad_norm, t)` once per step: a call made for its effect
        alone, handing a device tensor to a method of another object, which may keep it (the
        object's module is read for it; for every call with a tensor it would cost too much)."""
        repeats = bool(self.unit.roles) or any(loop.feeds_data for loop in self.loops)
        return (
            repeats
            and call is self.discarded
            and type(call.func) is cst.Attribute
            and any(on_the_device(value) for value in given)
        )

    def _on_self(self, recv: cst.BaseExpression | None) -> bool:
        return type(recv) is cst.Name and recv.value == self.unit.self_name and self.unit.self_name is not None

    def _note_own_item(self, name: str, value_expr: cst.BaseExpression, node: cst.CSTNode) -> None:
        """Whether `name` now stands for an item of the object's own container: bound to one
        (`state = self.state[p]`), or in a statement that also stores it there (`buf =
        state["momentum_buffer"] = d_p.clone()`)."""
        owners = [self._own_item_of(value_expr)]
        if type(node) is cst.Assign:
            owners += [self._own_item_of(t.target) for t in node.targets if type(t.target) is cst.Subscript]
        owner = next((o for o in owners if o is not None), None)
        if owner is None:
            self.own_items.pop(name, None)
        else:
            self.own_items[name] = owner

    def _own_item_of(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`self.state` for `self.state[p]["momentum_buffer"]`, or for `state["exp_avg"]` where
        `state` stands for an item of it."""
        if type(expr) is not cst.Subscript:
            return None
        while type(expr) is cst.Subscript:
            expr = expr.value
        if type(expr) is cst.Name:
            return self.own_items.get(expr.value)
        return expr if self_attribute(self.unit, expr) is not None else None

    def _in_place_update(self, call: cst.Call, recv: cst.BaseExpression) -> None:
        """`self.running_mean.mul_(m).add_(mean)`: a graph in the argument chains onto the buffer;
        onto a local, it gives the local a graph (`d_p.add_(p)` with gradients on)."""
        while type(recv) is cst.Call and callee_name(recv) in _IN_PLACE_UPDATES and receiver(recv) is not None:
            recv = receiver(recv)  # type: ignore[assignment]
        while type(recv) is cst.Subscript:  # `self.bank[i].copy_(k)` writes into `self.bank`
            recv = recv.value
        if type(recv) is cst.Name and recv.value in self.own_items:
            recv = self.own_items[recv.value]  # `buf.mul_(m).add_(d_p)` after `buf = state["momentum_buffer"]`
        elif type(recv) is cst.Name and self.grad_enabled and (known := self.env.get(recv.value)) is not None:
            given = _join_values([evaluate(arg.value, self) for arg in call.args if arg.keyword is None])
            if known.tensor and not known.graph and (given.graph or given.requires_grad):
                self.env[recv.value] = replace(known, graph=True)  # `d_p.add_(p, alpha=wd)`: recorded
        network = self._parameter_of_own_network(recv)
        if network is not None:
            recv = network  # `target_p.mul_(tau).add_(online_p)` over `self.target.parameters()`
        if not self.grad_enabled or self_attribute(self.unit, recv) is None or self.facts.is_list(self.unit, recv):
            return  # the method's name says a tensor: `add_`, `mul_` exist on tensors only
        if callee_name(call) in _OVERWRITES and not self._writes_into_buffer(recv):
            return
        written = [arg.value for arg in call.args if arg.keyword is None]
        if callee_name(call) in _INDEXED_WRITES:
            written = written[-1:]  # `index_copy_(dim, index, source)`: only the source is written
        value = _join_values([evaluate(arg, self) for arg in written])
        if network is not None and value.requires_grad:
            value = replace(value, graph=True)  # a parameter written into a frozen copy gives it history
        if value.graph:
            self._accumulate(call, recv, value, written[0])

    def _parameter_of_own_network(self, name: cst.BaseExpression) -> cst.BaseExpression | None:
        """The network of the object whose parameters (or buffers) a loop hands out under `name`:
        `self.target` for `target_p` in `for online_p, target_p in zip(self.online.parameters(),
        self.target.parameters())`. Written in place, each is a tensor the object keeps."""
        if type(name) is not cst.Name:
            return None
        for loop in reversed(self.loops):
            node = loop.node
            if type(node) is not cst.For or name.value not in target_names(node.target):
                continue
            iterables: list[cst.BaseExpression] = [node.iter]
            targets: list[cst.BaseExpression] = [node.target]
            if type(node.iter) is cst.Call and callee_name(node.iter) == "zip" and type(node.target) is cst.Tuple:
                iterables, targets = [a.value for a in node.iter.args], [e.value for e in node.target.elements]
            for iterable, target in zip(iterables, targets, strict=False):
                if type(iterable) is not cst.Call or callee_name(iterable) not in ("parameters", "buffers"):
                    continue
                network = receiver(iterable)
                if (
                    network is not None
                    and self_attribute(self.unit, network) is not None
                    and type(target) is cst.Name
                    and target.value == name.value
                ):
                    return network
            return None
        return None

    def _store_call(self, call: cst.Call, recv: cst.BaseExpression, name: str) -> None:
        position = STORE_METHODS[name]
        stored = argument(call, "__no_keyword__", position)
        if stored is None:
            return
        container = recv
        grows = name != "update"
        if name == "setdefault" and call.args:  # d.setdefault(k, v) stores v once per key, like d[k] = v
            grows = self._varies(call.args[0].value)
        inner = receiver(recv) if type(recv) is cst.Call and callee_name(recv) == "setdefault" else None
        if inner is not None:
            container = inner  # d.setdefault(k, []).append(v) grows d
        value = evaluate(stored, self)
        key = None
        if name == "add":
            key = self._key(stored)
        elif name == "setdefault" and call.args and inner is None:
            key = self._key(call.args[0].value)
        self._escape(value, "stored in a container", container)
        self._store(call, container, value, stored, grows, key=key)

    def _own_container(self, name: str) -> cst.BaseExpression | None:
        """The object's container that the name stands for: an item of it, as the loop variable
        of `for key, values in self.curves.items():` (`own_container_items`; not bound again in
        the loop); or what every call of this method on `self` hands the parameter
        (`self._keep(self.feats, x)`, `self._keep(values, x)` in such a loop)."""
        for loop in reversed(self.loops):
            if type(loop.node) is cst.For and name in target_names(loop.node.target):
                return _own_item(loop.node, self.unit, name)
        return _handed_own_container(self.unit, name) if self.arguments is None else None

    def _helper_effects(self, call: cst.Call, facts: Facts, target: Unit, report_at: cst.CSTNode | None = None) -> None:
        """`meter.update(loss)`: what the helper does with its arguments happens here too (reported
        at the call, or at `report_at` for a call the syntax implies, as `d[k] = v` does)."""
        implementations = overrides(facts.index, target)
        if implementations:  # an abstract method runs one of its overrides: what each does happens here
            for each in implementations:
                self._helper_effects(call, facts, each, report_at)
            return
        node = report_at or call
        judged_there = target.call_sites and target.roles and self.arguments is None and not target.called_per_batch
        if judged_there and not any(evaluate(arg.value, self).exception for arg in call.args):
            # A method that runs as often as this code: its own stores are judged where they are
            # (a caught exception is judged here, in the handler that caught it).
            return
        summary = summary_of(facts, target)
        args = arguments_by_position(call, target)
        helper = qualified_name(target)
        if summary.forwarded and self.replaying < _MAX_REPLAY_DEPTH:
            owner = receiver(call) if target.is_method else None
            self._replay(summary, args, node, helper, (target.self_name, owner))
        for position, (how, managed) in summary.captured_kept.items():
            arg = args.get(position)
            self._captured_by_helper(node, arg, helper, how, managed, across=facts is not self.facts)
        if not (summary.keeps or summary.appends_into or summary.stores_under_key or summary.copies_kept_for_the_run):
            return
        for position, kept_in in summary.copies_kept_for_the_run.items():
            arg = args.get(position)
            copy = evaluate(arg, self).without_graph() if arg is not None else UNKNOWN
            if arg is not None and on_the_device(copy) and not target.called_per_batch:
                via = f"`{helper}` appends a copy of it to `{kept_in}`, which nothing empties"
                self._store(node, _kept_where(call, target, kept_in), copy, arg, grows=True, via=via, for_the_run=True)
        for position, (kept_in, appended) in summary.keeps.items():
            arg = args.get(position)
            if arg is None:
                continue
            how = "appends it to" if appended else "adds it to"
            owner = receiver(call) if target.is_method else None
            while type(owner) is cst.Call and type(owner.func) is cst.Attribute:
                owner = owner.func.value
            target_expr = _kept_where(call, target, kept_in)
            attribute = kept_in.partition(".")[2]
            inherited = facts is not self.facts and self._on_self(owner)
            if inherited and Role.STEP not in self.unit.roles and _emptied_by_its_class(facts, target, attribute):
                continue  # a base class of another module empties it (`reset_registry`), as one of this file would
            if (
                facts is not self.facts
                and not self.loops
                and Role.STEP not in self.unit.roles
                and kept_in in facts.index.module_unit.managed_globals
            ):
                continue  # a global of the helper's module that a function there resets (`clear_aux_loss()`)
            value = evaluate(arg, self)
            self._escape(value, f"kept by `{helper}` in `{kept_in}`", target_expr)  # a callback it keeps
            if not (value.graph or value.exception):
                if position in summary.kept_for_the_run and on_the_device(value) and not target.called_per_batch:
                    # (a function this file's loop calls per batch: its own store is judged there)
                    via = f"`{helper}` {how} `{kept_in}`, which nothing empties"
                    self._store(node, target_expr, value, arg, grows=True, via=via, for_the_run=True)
                continue
            if not value.graph and position not in summary.kept_as_is:
                continue  # an exception is kept only as itself, not as a message made from it
            via = f"`{helper}` {how} `{kept_in}`"
            # Kept as it is given (`self._history[k].append(v)`), not a tensor made from it (a memo
            # of constants keyed by the values passed: bounded by them).
            for_the_run = position in summary.kept_for_the_run and position in summary.kept_as_is
            self._accumulate(node, target_expr, value, arg, via=via, appended=appended, for_the_run=for_the_run)
        stores: list[tuple[int, int, int | None]] = [(p, into, None) for p, into in summary.appends_into.items()]
        stores += [(p, into, key) for p, (into, key) in summary.stores_under_key.items()]
        for position, into, key_position in stores:
            arg, container = args.get(position), args.get(into)
            key = args.get(key_position) if key_position is not None else None
            if arg is None or container is None or (key_position is not None and key is None):
                continue
            if type(container) is cst.Call and callee_name(container) == "setdefault" and receiver(container):
                container = receiver(container)  # `keep(d.setdefault(k, []), v)` grows d
                assert container is not None
            adds_entry = key is not None and (self._varies(key) or _reads(key, container))
            grows = key is None or (adds_entry and not self.facts.is_list(self.unit, container))
            how = "appends it to" if key is None else "stores it under the given key in"
            value = evaluate(arg, self)
            if value.exception and not value.graph and position not in summary.kept_as_is:
                continue
            self._escape(value, "stored in a container", container)
            self._store(node, container, value, arg, grows=grows, via=f"`{helper}` {how} its argument")

    def _captured_by_helper(
        self, node: cst.CSTNode, arg: cst.BaseExpression | None, helper: str, how: str, managed: bool, *, across: bool
    ) -> None:
        """`logger.scalar("loss", loss)` where `scalar` keeps a lambda that captures its argument
        (`self._pending.append(lambda: ...float(value)...)`): the tensor is kept as long as the
        lambda is. A helper of this file is judged at its own lambda, given this call's values; one
        of another module, here. In a summary, the argument's sources are kept so in turn."""
        value = evaluate(arg, self) if arg is not None else UNKNOWN
        if arg is None or not value.keeps_memory or (managed and not value.graph):
            return  # (a container emptied while in use keeps no graph-free tensor for long)
        if not across and self.arguments is None:
            return
        names = tuple(sorted(value.sources)) if self.arguments is not None else (cst.Module([]).code_for_node(arg),)
        self.facts.escapes.append(
            ClosureEscape(node, self.unit, names, how, helper=helper, lifetime="attribute", managed=managed)
        )

    def _replay(
        self,
        summary: Summary,
        args: dict[int, cst.BaseExpression],
        node: cst.CSTNode,
        helper: str,
        owner: tuple[str | None, cst.BaseExpression | None],
    ) -> None:
        """A helper's statements on its arguments, judged here with the caller's arguments in
        place of its parameters (and the object a method is called on in place of its `self`:
        `self._keep(key, h)` runs `self._cache[key] = h`), and reported at the call (`record`
        runs `history.append(loss)`)."""
        given = {name: args[position] for position, name in enumerate(summary.params) if position in args}
        self_name, called_on = owner
        if self_name is not None and called_on is not None:
            given[self_name] = called_on
        named = {*summary.params, *([self_name] if self_name else [])}
        outer = (self.report_at, self.replay_via)
        self.replaying += 1
        try:
            for statement in summary.forwarded:
                if not names_in(statement) & named <= set(given):
                    continue
                replayed = cast(cst.BaseSmallStatement, statement.visit(_Substitution(given)))
                runs = f"`{helper}` runs `{cst.Module([]).code_for_node(replayed)}`"
                self.report_at, self.replay_via = outer[0] or node, outer[1] or runs
                self._small(replayed)
        finally:
            (self.report_at, self.replay_via), self.replaying = outer, self.replaying - 1

    def _registration(self, call: cst.Call, recv: cst.BaseExpression | None) -> None:
        on_tensor = callee_name(call) in ("register_hook", "register_post_accumulate_grad_hook", "register_prehook")
        if type(recv) is cst.Attribute and recv.attr.value == "grad_fn":
            recv = recv.value  # y.grad_fn.register_hook(...): a hook on y's graph
        hooked = self.env.get(recv.value) if type(recv) is cst.Name else None
        if on_tensor and type(recv) is cst.Name and hooked and hooked.tensor and not hooked.requires_grad:
            # A hook on a local tensor lives as long as that tensor's graph, unless what the hook
            # captures also holds the tensor: checked when the function is walked (cycles). (A
            # parameter, `for p in model.parameters()`, lives on with its hooks.)
            for arg in call.args:
                closure = evaluate(arg.value, self).closure or (arg.value if type(arg.value) is cst.Lambda else None)
                if closure is not None:
                    self.tensor_hooks.append((closure, recv.value))
            return
        for arg in call.args:
            value = evaluate(arg.value, self)
            if value.closure is not None and not self._removed_before_return(call):
                self._escape(value, f"registered with `{callee_name(call)}`")

    def _removed_before_return(self, registration: cst.Call) -> bool:
        """The hook ends with the call: `h = m.register_forward_hook(fn); ...; h.remove()`, or its
        handle put in a list (or made by a comprehension) whose handles the function removes (`for h in handles: h.remove()`)
        or returns to its caller, or used as a context manager (`with m.register_forward_hook(fn):`,
        removed when the block ends)."""
        holder = None
        for node in own_nodes(self.unit.node):
            if type(node) is cst.With and any(item.item is registration for item in node.items):
                return True
            made = node.value.elt if type(node) is cst.Assign and type(node.value) is cst.ListComp else None
            if type(node) is cst.Assign and registration in (node.value, made) and len(node.targets) == 1:
                holder = dotted_name(node.targets[0].target)  # or `hooks = [m.register_...(fn) for m in ms]`
            elif type(node) is cst.AugAssign and contains(node.value, registration):
                holder = dotted_name(node.target)  # handles += [m.register_forward_hook(fn)]
            elif (
                type(node) is cst.Call
                and callee_name(node) in STORE_METHODS
                and any(contains(arg.value, registration) for arg in node.args)
            ):
                holder = dotted_name(receiver(node) or node)  # handles.append(...), .extend([...])
            if holder is not None:
                break
        if holder is None:
            return False
        removed = any(
            callee_name(call) == "remove" and not call.args and dotted_name(receiver(call) or call) == holder
            for call in calls_in(self.unit.node)
        )
        return removed or removes_handles(self.unit.node, holder) or self._hands_back(holder)

    def _hands_back(self, holder: str) -> bool:
        """`return handles`: the caller, given the handles, removes them (`finally: h.remove()`)."""
        for node in own_nodes(self.unit.node):
            if type(node) is cst.Return and node.value is not None:
                returned = [e.value for e in node.value.elements] if type(node.value) is cst.Tuple else [node.value]
                if any(dotted_name(e) == holder for e in returned):
                    return True
        return False

    def _find_hook_cycles(self) -> None:
        """`y.register_hook(lambda g: self.save(g))` with `self.out = y`: self -> y -> hook -> self."""
        for closure, tensor in self.tensor_hooks:
            free = free_names(closure)
            holders = [
                dotted_name(store.container) or ""
                for store in self.facts.stores
                if store.unit is self.unit and tensor in names_in(store.value_expr)
            ]
            cls = self.unit.cls
            if cls is not None and self.unit.self_name:
                holders += [
                    f"{self.unit.self_name}.{attribute}"
                    for attribute, assigned in cls.attribute_values.items()
                    for value, unit in assigned
                    if unit is self.unit and tensor in names_in(value)
                ]
            for holder in holders:
                if holder.split(".")[0] in free:
                    how = f"registered as a hook on `{tensor}`, which `{holder}` holds"
                    self.facts.escapes.append(
                        ClosureEscape(closure, self.unit, (holder.split(".")[0],), how, cycle=(tensor, holder))
                    )
                    break

    def _output_and_its_loss(self, returned: cst.BaseExpression) -> bool:
        """`return output_tensor, partial(loss_func, loss_mask)`: a step's output and the function to
        apply to it, the pair a pipeline schedule asks a forward step for (Megatron's
        `forward_step_func`): the schedule calls it on that output at once and drops it."""
        if type(returned) is not cst.Tuple or len(returned.elements) != 2:
            return False
        output, loss = (element.value for element in returned.elements)
        if evaluate(loss, self).closure is None:
            return False
        # the output, or what the model builds for the schedule (`model.build_schedule_plan(...)`)
        bound = self.unit.bindings.get(output.value, []) if type(output) is cst.Name else [output]
        made_by_module = bool(bound) and all(
            type(v) is cst.Call and type(v.func) is cst.Attribute and self._is_model(v.func.value) for v in bound
        )
        return evaluate(output, self).tensor or made_by_module

    def _is_model(self, expr: cst.BaseExpression) -> bool:
        """A module, or a name for one whatever its annotation says (`model: GPTModel`)."""
        return evaluate(expr, self).module or (type(expr) is cst.Name and is_model_name(expr.value))

    def _returned_value(self, value: cst.BaseExpression) -> Value:
        """What a `return` gives; of a tuple display, or of a helper that returns one (`return
        self.run(x)`, while summarising), each position is also kept (see `elements`)."""
        passed_on = self.summarized_elements(value) if self.arguments is not None and type(value) is cst.Call else None
        if passed_on is not None:
            values = list(passed_on)
        elif type(value) is not cst.Tuple or any(type(e) is cst.StarredElement for e in value.elements):
            self.returns_other = True
            returned = evaluate(value, self)
            self.flagged.append(Flagged(frozenset(self.flags_now), returned, None))
            return returned
        else:
            values = [evaluate(element.value, self) for element in value.elements]
        self.flagged.append(Flagged(frozenset(self.flags_now), _join_values(values), tuple(values)))
        if self.returned_elements is None:
            self.returned_elements = values
        elif len(values) == len(self.returned_elements):
            self.returned_elements = [a.join(b) for a, b in zip(self.returned_elements, values, strict=True)]
        else:
            self.returns_other = True
        return _join_values(values)  # what `evaluate` makes of a tuple display, its elements joined

    def _flag_tested(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """`return_images` or `not return_images` where the function being summarised has that
        parameter with a `True`/`False` default and never rebinds it: (its name, the value the
        body runs under)."""
        if self.arguments is None or type(self.unit.node) is not cst.FunctionDef:
            return None
        wanted = True
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, wanted = test.expression, False
        if type(test) is not cst.Name or test.value in self.unit.bindings or test.value in self.unit.augmented:
            return None
        return (test.value, wanted) if test.value in _flag_parameters(self.unit) else None

    @property
    def elements(self) -> tuple[Value, ...] | None:
        """The value of each position of the returned tuple, when every return gives one."""
        if self.returns_other or self.returned_elements is None:
            return None
        return tuple(self.returned_elements)

    def _path_key(self, expr: cst.BaseExpression) -> str | None:
        """The name under which the walk holds `self.<attribute>`, or a path below it
        (`self.state.output`), as set on this path: dotted, so never a variable's (a call that may
        change it drops every dotted name). None for an expression not so read off `self`."""
        own = self.unit.self_name
        if type(expr) is not cst.Attribute or own is None or self.unit.cls is None:
            return None
        root = expr.value
        if type(root) is cst.Name:  # `self.x`, most reads: no chain to spell
            return f"{own}.{expr.attr.value}" if root.value == own else None
        while type(root) is cst.Attribute:
            root = root.value
        return dotted_name(expr) if type(root) is cst.Name and root.value == own else None

    def _hands_over_self(self, call: cst.Call, recv: cst.BaseExpression | None) -> bool:
        """Whether a call may set attributes of `self`: a method of `self` (or of `super()`), or
        a call given `self`."""
        own = self.unit.self_name
        if own is None:
            return False
        if (type(recv) is cst.Name and recv.value == own) or (type(recv) is cst.Call and callee_name(recv) == "super"):
            return True
        return any(type(arg.value) is cst.Name and arg.value.value == own for arg in call.args)

    def _store_attribute(self, target: cst.Attribute, value: Value) -> None:
        """`obj.fn = closure`: it escapes with `obj`, unless the attribute is restored later in the
        call on every path (`model.forward = original` in a `finally`), as monkeypatches are."""
        name = dotted_name(target) or target.attr.value
        restored = self.patched.pop(name, None)
        restores = restored is not None and value.closure is None and len(self.conditions) <= restored[1]
        if restored is not None and restores and restored[0] in self.facts.escapes:
            self.facts.escapes.remove(restored[0])
        # An object made here (not a parameter) dies with the call unless it is kept.
        root = target.value
        made_here = type(root) is cst.Name and root.value in self.unit.bindings
        owner = root if made_here and type(root) is cst.Name and root.value not in self._param_names() else None
        before = len(self.facts.escapes)
        self._escape(value, f"stored in `{name}`", owner)
        if len(self.facts.escapes) > before:
            self.patched[name] = (self.facts.escapes[-1], len(self.conditions))

    def _graph_given(self) -> bool:
        """Whether this is a per-step method that training code hands its outputs, graph included.
        Not a cache's `update`, which generation calls under no_grad (a class named for a cache),
        nor that of a normaliser's running statistics, fed the data (`RunningMeanStd.update(obs)`),
        or of a class whose parts are such normalisers."""
        unit = self.unit
        if Role.STEP not in unit.roles or unit.name not in GRAPH_GIVEN_METHODS:
            return False
        classes = lineage(self.index.classes, unit.cls) if unit.cls is not None else []
        names = [c.name for c in classes] + [b or "" for c in classes for b in c.base_names]
        if any("Cache" in name or "cache" in name for name in names):
            return False
        if any(names_data_statistics(name.rsplit(".", 1)[-1]) for name in names):
            return False
        parts = [
            made
            for cls in classes
            for values in cls.attribute_values.values()
            for value, _ in values
            if type(value) is cst.Call and (made := callee_name(value)) in self.index.classes
        ]
        return not (parts and all(names_data_statistics(part) for part in parts))

    def _param_names(self) -> set[str]:
        return {p.name.value for p in self.unit.params}

    def _escape(self, value: Value, how: str, container: cst.BaseExpression | None = None) -> None:
        if value.closure is None or not value.captured:
            return
        local = None
        lifetime, kind = self.facts.container_kind(self.unit, container) if container is not None else (None, None)
        if kind == "managed" and not any(self.lookup(name).graph for name in value.captured):
            return  # emptied while in use (a flush), and what it keeps has no graph: bounded
        if lifetime == "local" and container is not None:
            local = root_name(container)  # outlives the call only if the container does
            if local in self._param_names():
                local = None  # the caller's container: it outlives the call
        captured = value.captured
        if how in ("returned", "yielded"):
            # Handed back to the caller, a closure over the caller's own tensors extends nothing
            # the caller does not hold; one over a tensor made here does.
            captured = self._made_here(captured)
        if captured:
            self.facts.escapes.append(
                ClosureEscape(
                    value.closure,
                    self.unit,
                    captured,
                    how,
                    local_container=local,
                    lifetime=lifetime,
                    managed=kind == "managed",
                )
            )

    def _made_here(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """The names that hold what this call made: not its parameters, nor locals that only alias them."""
        params = self._param_names()
        aliases = {
            name
            for name, values in self.unit.bindings.items()
            if values and all(type(v) is cst.Name and v.value in params | {"None"} for v in values)
        }
        return tuple(n for n in names if n not in params | aliases)

    def _cuda_work(self, call: cst.Call, name: str | None, recv: cst.BaseExpression | None) -> CudaWork | None:
        qualified = self.imports.qualify(call.func)
        if qualified is not None and qualified.startswith("torch.cuda."):
            last = qualified.rsplit(".", 1)[-1]
            safe = last in CUDA_SAFE or qualified.startswith(CUDA_SAFE_MODULES)
            if safe or (last == "autocast" and not _checks_bfloat16(call)):
                return None
            return CudaWork(call, self.unit, f"`{qualified}()`")
        if recv is not None and name == "cuda":
            return CudaWork(call, self.unit, "`.cuda()`")
        positional = [a for a in call.args if a.keyword is None]
        for arg in call.args:
            names_device = arg.keyword is not None and arg.keyword.value == "device"
            first_of_to = recv is not None and name == "to" and positional[:1] == [arg]
            if (names_device or first_of_to) and (
                evaluate(arg.value, self).cuda or self._constructed_on_cuda(arg.value)
            ):
                what = "`.to()` with a CUDA device" if name == "to" else "a CUDA `device=`"
                return CudaWork(call, self.unit, what, arg)
        return None

    def _constructed_on_cuda(self, device: cst.BaseExpression) -> bool:
        """`self.device` that `__init__` sets from its parameter, given CUDA where this file builds
        the object: `Collator(torch.device("cuda"))`, `Collator(device)` after `device = "cuda"`."""
        attribute = self_attribute(self.unit, device)
        cls = self.unit.cls
        if attribute is None or cls is None:
            return False
        for expr, unit in cls.attribute_values.get(attribute, []):
            if type(expr) is cst.Name and unit.name == "__init__" and _constructed(self.facts, unit, expr.value).cuda:
                return True
        return False

    # -- loops ---------------------------------------------------------------------------------

    def _loop_info(self, statement: cst.For | cst.While) -> Loop:
        assigned: set[str] = set()
        reads: dict[str, set[str]] = {}
        calls_backward = fetches = steps = False
        handed: list[cst.Call] = []  # calls that may hand a loader over, judged once `assigned` is known
        nested: set[int] | None = None  # calls in inner loops: a step called there is theirs
        for node in self._loop_nodes(statement):  # compared by type: isinstance against LibCST's ABCs is slow
            if (type(node) is cst.Assign or type(node) is cst.AnnAssign) and node.value is not None:
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                read = names_in(node.value)
                steps = steps or steps_an_environment(node.value)
                for target in targets:
                    names = target_names(target)
                    assigned |= names
                    for name in names:
                        reads.setdefault(name, set()).update(read)
            elif type(node) is cst.For:
                assigned |= target_names(node.target)
            elif type(node) is cst.Call:
                called = callee_name(node)
                if not calls_backward and self._steps(node):
                    if nested is None:
                        nested = {id(n) for loop in _inner_loops(statement) for n in walk(loop)}
                    calls_backward = id(node) not in nested
                calls_backward = calls_backward or called in ("backward", "manual_backward")
                fetches = fetches or fetches_next(node)  # `next(it)`
                handed.append(node)
        if type(statement) is cst.For:
            assigned |= target_names(statement.target)
        # ... or a loop over epochs that hands a loader to a training function
        fetches = fetches or any(hands_over_data(call, assigned) for call in handed)
        # `for batch_idx in range(len(features))`: the loop variable says it counts batches
        over_batches = type(statement) is cst.For and counts_batches(statement.iter, statement.target)
        examples = (
            iterates_examples(statement, self.unit)
            and not self._zips_outputs(statement)
            and not self._hands_back_chunks(statement)
        )
        over_batches = over_batches or examples
        feeds_data = calls_backward or fetches or examples or iterates_loader(statement, self.unit, self.imports)
        decoding = steps or decodes(statement, self.unit, self.imports)
        # A sampler's steps, which rebuild a state from the network's output on it: not over data
        refining = not (feeds_data or decoding) and names_generation(self.unit)
        refined = refined_state(self.unit, statement) if refining else set()
        generates = not calls_backward and not fetches and (decoding or bool(refined))
        return Loop(
            statement,
            frozenset(reset_every_iteration(statement, self.unit) - refined),  # `x = a * x0 + d`: rebuilt from itself
            frozenset(assigned),
            calls_backward,
            not calls_backward and not fetches and not over_batches and not generates and self._computes(statement),
            feeds_data,
            frozenset(carried_names(statement)),
            {k: frozenset(v) for k, v in reads.items()},
            generates,
            frozenset(refined),
        )

    def _loop_nodes(self, statement: cst.For | cst.While) -> Iterator[cst.CSTNode]:
        """The loop body's own nodes, and the calls of the step functions it calls (`_step(x)`,
        a function this one defines: its `backward()` is the loop's)."""
        for node in own_nodes(statement.body):
            yield node
            if type(node) is cst.Call and (nested := self._step_function_called(node)) is not None:
                assert type(nested.node) is cst.FunctionDef
                yield from (n for n in own_nodes(nested.node.body) if type(n) is cst.Call)

    def _step_function_called(self, call: cst.Call) -> Unit | None:
        """The function this one defines and calls by name in its loops that `call` runs, if any
        (`_step(batch)`; see `_step_functions`)."""
        if type(call.func) is not cst.Name:
            return None
        nested = self.unit.defs.get(call.func.value)
        return nested if nested is not None and id(nested) in self.facts.step_functions else None

    def _hands_back_chunks(self, loop: cst.For | cst.While) -> bool:
        """`for i in range(0, B, chunk): out_chunks += [model(x[i:i + chunk])]` in NeRF's
        `inference`, which returns what the network computed, graph and all: whose caller trains
        on it, or turns gradients off; not an evaluation that keeps what it has no use for."""
        return runs_in_chunks(loop, self.unit) and summary_of(self.facts, self.unit).returns_plain.graph

    def _zips_outputs(self, loop: cst.For | cst.While) -> bool:
        """`for sequence, target in zip(output, highlight)`: the rows of a batch already computed."""
        iterable = loop.iter if type(loop) is cst.For else None
        if type(iterable) is not cst.Call or callee_name(iterable) != "zip":
            return False
        return any(evaluate(arg.value, self).tensor for arg in iterable.args)

    def _steps(self, call: cst.Call) -> bool:
        """`stats = update(net, opt, batch)`, `trainer.train_step(sample)`: a function or method of
        the project that is one training step (it calls `backward()` outside its own loops), so the
        loop calling it trains."""
        known = self._callee_unit(call)
        return known is not None and known[1] is not self.unit and steps_once(known[1])

    def _computes(self, loop: cst.For | cst.While) -> bool:
        """Whether a loop's iterable is computation, not data: layers, `range`, tensors, dict items."""
        if isinstance(loop, cst.While):
            return True
        return self._computed_iterable(loop.iter) or self._iterates_objects(loop)

    def _in_a_network(self) -> bool:
        """A method of a torch module, through the project's bases too (`class Embeddings(nn.Module)` in another module)."""
        cls = self.unit.cls
        return cls is not None and _module_class_across(self.facts, cls)

    def _iterates_objects(self, loop: cst.For) -> bool:
        """`for cb in self.callbacks: cb.on_batch_end(self, loss)`: the items are objects whose
        methods a class of this file defines (the method guessed by its name, as for a call), not data."""
        target = loop.target
        if type(target) is not cst.Name or iterates_loader(loop, self.unit, self.imports):
            return False
        return any(
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and type(node.func.value) is cst.Name
            and node.func.value.value == target.value
            and self._method_named_for(node.func.value, node.func.attr.value) is not None
            for node in own_nodes(loop.body)
        )

    def _computed_iterable(self, iterable: cst.BaseExpression) -> bool:
        value = evaluate(iterable, self)
        if value.module or value.tensor or self._item_class(iterable) is not None:
            return True  # layers, tensors, or objects of a class the code shows (callbacks, meters)
        if (
            type(iterable) is cst.Name
            and self._in_a_network()
            and pieces_made_here(iterable.value, self.unit, self.imports)
        ):
            return True  # the chunks a network's method cut from its input
        if type(iterable) is cst.Name and few_pieces(iterable.value, self.unit):
            return True  # a few pieces of one iteration (its labelled and unlabelled batches)
        if _a_groups_params(iterable) or (type(iterable) is cst.Attribute and iterable.attr.value == "param_groups"):
            return True  # an optimizer's parameter groups, and a group's parameters
        if type(iterable) is cst.Call:
            name = callee_name(iterable)
            if name in COMPUTED_COLLECTIONS:
                return True
            if name in ITEM_WRAPPERS:
                return bool(iterable.args) and all(
                    self._computed_iterable(a.value) for a in iterable.args if not a.keyword
                )
            owner = receiver(iterable)
            if name == "tolist" and owner is not None and evaluate(owner, self).tensor:
                return True  # `buckets.unique().tolist()`: a batch's own values
        return isinstance(iterable, (cst.List, cst.Tuple))


def _values_and_indices(expr: cst.BaseExpression) -> bool:
    """`torch.topk(s, k)`, `x.max(dim=1)`, `torch.sort(x)`: a pair of values and their indices
    (not the builtin `max(pairs)`, which returns an item)."""
    if (
        type(expr) is not cst.Call
        or type(expr.func) is not cst.Attribute
        or expr.func.attr.value not in _VALUES_AND_INDICES
    ):
        return False
    if expr.func.attr.value not in _PAIRS_WITH_A_DIM:
        return True
    # `x.max(1)`, `torch.max(x, dim=1)`: a pair; `torch.max(a, b)`: one tensor, elementwise
    given_dim = any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args)
    positional = [a.value for a in expr.args if a.keyword is None]
    dim_at = 1 if dotted_name(expr.func.value) == "torch" else 0
    return given_dim or (len(positional) > dim_at and _an_integer(positional[dim_at]))


_VALUES_AND_INDICES = frozenset(["topk", "sort", "max", "min", "kthvalue", "mode", "median", "nanmedian", "cummax",
                                 "cummin"])  # fmt: skip
_PAIRS_WITH_A_DIM = frozenset(["max", "min", "median", "nanmedian"])


def _an_integer(expr: cst.BaseExpression) -> bool:
    """`1`, `-1`."""
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        expr = expr.expression
    return type(expr) is cst.Integer


def _paired_items(
    target: cst.BaseExpression, iterable: cst.BaseExpression
) -> list[tuple[cst.BaseExpression, cst.BaseExpression | None]]:
    """A loop's targets, each with the iterable its items come from (None: not an item of one):
    `for i, sv in enumerate(svs)` binds `sv` to an item of `svs`, `for x, y in zip(xs, ys)` each
    to its own, `for name, t in d.items()` a key and an item of `d.items()`."""
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
    if elements and (columns := _columns(iterable, len(elements))) is not None:
        # `for name, value in (("emb", emb), ("logits", logits))`: each name takes its column
        return [
            pair for element, column in zip(elements, columns, strict=True) for pair in _paired_items(element, column)
        ]
    if not elements or type(iterable) is not cst.Call:
        return [(target, iterable)]
    name = callee_name(iterable)
    args = [a.value for a in iterable.args if a.keyword is None]
    if len(elements) == 2 and name == "enumerate" and len(args) == 1:
        return [(elements[0], None), *_paired_items(elements[1], args[0])]
    if name == "zip" and len(args) == len(elements) and type(iterable.func) is cst.Name:
        return [pair for element, arg in zip(elements, args, strict=True) for pair in _paired_items(element, arg)]
    if len(elements) == 2 and name in KEYED_ITEMS:
        return [(elements[0], None), (elements[1], iterable)]  # a key or a name, not a tensor
    return [(target, iterable)]


def _a_groups_params(iterable: cst.BaseExpression) -> bool:
    """`group["params"]`: the parameters of one of an optimizer's `param_groups`."""
    if type(iterable) is not cst.Subscript or len(iterable.slice) != 1:
        return False
    index = iterable.slice[0].slice
    return type(index) is cst.Index and string_value(index.value) == "params"


def _detached_params(unit: Unit) -> set[str]:
    """The parameters the function detaches (`td_errors.detach()`) and never binds anew."""
    params = {p.name.value for p in unit.argument_params}
    return {
        func.value.value  # (read without helpers: asked of nearly every function)
        for call, _ in placed(unit, cst.Call)
        if type(func := call.func) is cst.Attribute
        and func.attr.value == "detach"
        and type(func.value) is cst.Name
        and func.value.value in params
        and func.value.value not in unit.bindings
    }


def _makes_a_record_type(value: cst.BaseExpression) -> bool:
    """`namedtuple("Transition", fields)`, `collections.namedtuple(...)`, `NamedTuple("Row", [...])`."""
    return type(value) is cst.Call and callee_name(value) in ("namedtuple", "NamedTuple")


def _fixed_targets(iterable: cst.BaseExpression, target: cst.BaseAssignTargetExpression, unit: Unit) -> set[str]:
    """The loop's names that take only fixed values written in the display it iterates: `name`
    in `for name in ("emb", "logits")` and in `for name, value in (("emb", emb), ("logits", out))`;
    literals, or the fields of a settings object the object keeps (`self.hparams.train_loss`)."""
    if not isinstance(iterable, (cst.Tuple, cst.List, cst.Set)):
        return set()
    if type(target) is cst.Name:
        fixed = all(type(e) is cst.Element and _a_fixed_value(e.value, unit) for e in iterable.elements)
        return {target.value} if iterable.elements and fixed else set()
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
    columns = _columns(iterable, len(elements)) if elements else None
    if columns is None:
        return set()
    return {
        element.value
        for element, column in zip(elements, columns, strict=True)
        if type(element) is cst.Name and all(_a_fixed_value(e.value, unit) for e in column.elements)
    }


def _a_fixed_value(expr: cst.BaseExpression, unit: Unit) -> bool:
    """A literal, or a field of a settings object the object keeps: `self.hparams.train_loss`
    (not `self.step_count`, which the object may count up)."""
    return is_literal(expr) or (
        type(expr) is cst.Attribute and type(expr.value) is cst.Attribute and _of_self(unit, expr)
    )


def _columns(iterable: cst.BaseExpression, width: int) -> list[cst.List] | None:
    """The columns of a display of rows, each row a tuple or list of `width` plain elements:
    `(("emb", emb), ("logits", logits))` gives `["emb", "logits"]` and `[emb, logits]`."""
    if not isinstance(iterable, (cst.Tuple, cst.List)) or not iterable.elements:
        return None
    rows: list[list[cst.BaseExpression]] = []
    for row in iterable.elements:
        if type(row) is not cst.Element or not isinstance(row.value, (cst.Tuple, cst.List)):
            return None
        items = row.value.elements
        if len(items) != width or any(type(item) is not cst.Element for item in items):
            return None
        rows.append([item.value for item in items])
    return [cst.List([cst.Element(row[i]) for row in rows]) for i in range(width)]


# In-place tensor operations that write their argument into the receiver: autograd records the
# write on the receiver, chained to the receiver's previous history, for `copy_` and `buf[i] = v`
# as for `add_` (docs/verifier.md: +8 autograd nodes per call of a `forward` that does it).
_IN_PLACE_UPDATES = frozenset(
    ["add_", "sub_", "mul_", "div_", "lerp_", "addcmul_", "addcdiv_", "copy_", "fill_", "index_copy_",
     "index_add_", "index_put_", "scatter_", "scatter_add_", "masked_scatter_", "masked_fill_"]
)  # fmt: skip
# Those that overwrite the receiver's values instead of folding into them.
_OVERWRITES = frozenset(["copy_", "fill_", "index_copy_", "index_put_", "scatter_", "masked_scatter_", "masked_fill_"])
# Those whose leading arguments say where to write (a dimension, an index, a mask), not what.
_INDEXED_WRITES = frozenset(
    ["index_copy_", "index_add_", "index_put_", "scatter_", "scatter_add_", "masked_scatter_", "masked_fill_"]
)


def _reads(expr: cst.BaseExpression, part: cst.BaseExpression) -> bool:
    """Whether `expr` contains `part`: `len(self.d)` reads `self.d`."""
    return any(type(node) is type(part) and same_code(node, part) for node in walk(expr))


_GRAPH_DROPPING_METHODS = frozenset(["detach", "detach_", "item", "tolist", "numpy"])


def _field_or_tuple(expr: cst.BaseExpression) -> bool:
    """`r.id`, `mesh.layout`, `(a, b)`, `tuple(...)`: not a tensor's own attribute (`t.data`)."""
    if type(expr) is cst.Attribute:
        return expr.attr.value not in _TENSOR_ATTRIBUTES
    return type(expr) is cst.Tuple or _calls(expr, "tuple")


_TENSOR_ATTRIBUTES = frozenset(["data", "grad", "T", "mT", "H", "mH", "real", "imag"])


def _reraises(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """`except KeyError: raise`: the handler ends by raising, so code after the `try` runs only
    when its body ran to the end."""
    return type(last_statement(handler.body)) is cst.Raise  # also `except KeyError: raise`


# How frameworks annotate the step outputs a hook is given: `outputs: Optional[dict]`, `STEP_OUTPUT`.
_OUTPUTS_TYPES = frozenset(["Optional", "Union", "None", "dict", "Dict", "Mapping", "Any", "typing", "STEP_OUTPUT"])


def _a_batch_end_hook(name: str) -> bool:
    """Lightning's `on_train_batch_end`, `on_validation_batch_end`, ..., mmengine's
    `after_train_iter`, `after_val_iter`, ...: given the step's outputs."""
    return (name.startswith("on_") and name.endswith("_batch_end")) or (
        name.startswith("after_") and name.endswith("_iter")
    )


_MODULE_STRUCTURE = frozenset(
    ["parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
     "named_children"]
)  # fmt: skip


def _dict_key_target(loop: cst.For) -> set[str]:
    """The name a loop binds to a dict's keys: `k` of `for k, v in d.items()` or `for k in d.keys()`."""
    iterable = loop.iter
    if type(iterable) is not cst.Call or type(iterable.func) is not cst.Attribute or iterable.args:
        return set()
    method = iterable.func.attr.value
    target: cst.BaseExpression = loop.target
    if method == "items" and type(target) is cst.Tuple and len(target.elements) == 2:
        target = target.elements[0].value
    elif method != "keys":
        return set()
    if type(target) is not cst.Name or set(target.value.lower().split("_")) & _IDENTITY_WORDS:
        return set()  # `for episode_id, v in infos.items()`: one key per episode, not a fixed name
    return {target.value}


_IDENTITY_WORDS = frozenset(["id", "ids", "idx", "index", "uid", "uuid", "step", "path", "file", "filename"])


def _fixed_collection(iterable: cst.BaseExpression, unit: Unit) -> bool:
    """A collection whose items are the same on every call: `range(n)`, `self.heads`, a model's
    parameters and modules, and fields named for kinds or names (`g.canonical_etypes`,
    `self.task_names`), also under `enumerate`."""
    if type(iterable) is cst.Call and dotted_name(iterable.func) in ("enumerate", "sorted", "list"):
        return len(iterable.args) == 1 and _fixed_collection(iterable.args[0].value, unit)
    if type(iterable) is cst.Call and dotted_name(iterable.func) == "range":
        return True
    if type(iterable) is cst.Call and callee_name(iterable) in _MODULE_STRUCTURE:
        return True  # `model.named_parameters()`: the same names every call
    if self_attribute(unit, iterable) is not None or _of_self(unit, iterable):
        return True  # `self.heads`, `self.mlp.token_dispatcher.cudagraph_attrs`: the object's own
    return type(iterable) is cst.Attribute and names_text(iterable.attr.value)


def _of_self(unit: Unit, expr: cst.BaseExpression) -> bool:
    """`self.a.b`: an attribute of what the object keeps."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    return (
        unit.self_name is not None and unit.cls is not None and type(expr) is cst.Name and expr.value == unit.self_name
    )


# Methods that move or cast a tensor: `self.x = self.x.cuda()` replaces it, it does not fold into it.
_MOVES = frozenset(["cuda", "cpu", "to", "float", "half", "double", "bfloat16", "type", "contiguous"])


def _moved(value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """`self.logvar.cuda(non_blocking=True)`, `self.mask.to(x.device).float()`: the target moved or cast."""
    return same_code(_unmoved(value), target)


def _unmoved(value: cst.BaseExpression) -> cst.BaseExpression:
    """`criterion` for `criterion.cuda()`, `x` for `x.to(device).float()`."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _MOVES:
        value = value.func.value
    return value


def _calls(expr: cst.BaseExpression, method: str) -> bool:
    return type(expr) is cst.Call and callee_name(expr) == method


def _produced(expr: cst.BaseExpression) -> bool:
    """A call that computes something (a step, a network), not a container made or copied."""
    return type(expr) is cst.Call and callee_name(expr) not in (
        "dict",
        "list",
        "tuple",
        "defaultdict",
        "OrderedDict",
    )


def _read_with_history(expr: cst.BaseExpression) -> list[cst.CSTNode]:
    """The nodes of `expr` outside the parts that drop the graph: `h * m` of `h.detach() * m` is `m`."""
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and _drops_graph(node):
            continue
        found.append(node)
        stack += children(node)
    return found


def _to_numbers(expr: cst.BaseExpression) -> bool:
    """`v.item()`, `v.tolist()`, `x.detach().cpu().numpy()`, `float(v)`: Python or NumPy numbers."""
    if type(expr) is not cst.Call:
        return False
    name = callee_name(expr)
    return name in ("float", "int") if type(expr.func) is cst.Name else name in ("item", "tolist", "numpy")


def _drops_graph(expr: cst.BaseExpression) -> bool:
    """`x.detach()`, `x.detach().cpu()`, `x.item()`: the value, whatever it was, has no history."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        if expr.func.attr.value in _GRAPH_DROPPING_METHODS:
            return True
        if expr.func.attr.value not in ("cpu", "to", "clone", "float", "double", "half", "contiguous"):
            return False
        expr = expr.func.value
    return False


def _is_torchmetrics(facts: Facts, cls: ClassInfo) -> bool:
    return _based_on(facts, cls, ("torchmetrics.",))


# Lightning's evaluation loops run under `no_grad` (or `inference_mode`), hooks included.
_EVALUATION_HOOKS = ("on_validation_", "on_test_", "on_predict_", "validation_epoch_end", "test_epoch_end")


def _is_lightning(facts: Facts, cls: ClassInfo) -> bool:
    """A LightningModule or a Lightning `Callback` (of either package name)."""
    return _based_on(facts, cls, ("lightning.", "pytorch_lightning."))


def _based_on(facts: Facts, cls: ClassInfo, packages: tuple[str, ...]) -> bool:
    return any(
        (base or "").startswith(packages) for ancestor in lineage(facts.index.classes, cls)
        for base in ancestor.base_names
    )  # fmt: skip


def _forward_updates_without_grad(facts: Facts, cls: ClassInfo, depth: int = 0) -> bool:
    """Whether the `forward` the class has or inherits, through bases of this or other modules of
    the project, calls `self.update(...)` only under `no_grad`, or after `self.reset()` for the
    batch's own value (Lightning's metrics before torchmetrics): the metric's totals, kept across
    calls, accumulate no history."""
    classes = lineage(facts.index.classes, cls)
    for ancestor in classes:
        forward = ancestor.methods.get("forward")
        if forward is not None:
            unit = facts.index.method_units[id(forward)]
            guarded = NoGrad(unit).nodes
            updates, reset = [], False
            for call, _ in placed(unit, cst.Call):  # in the order of the text
                called = dotted_name(call.func)
                reset = reset or called == "self.reset"
                if called == "self.update":
                    updates.append(id(call) in guarded or reset)
            return bool(updates) and all(updates)
    if depth >= _MAX_BASE_MODULES:
        return False
    base = next(_imported_bases(facts, cls), None)
    return base is not None and _forward_updates_without_grad(*base, depth + 1)


def _inner_loops(loop: cst.For | cst.While) -> list[cst.For | cst.While]:
    return [node for node in own_nodes(loop.body) if type(node) is cst.For or type(node) is cst.While]


def _flag_parameters(unit: Unit) -> dict[str, tuple[int, bool]]:
    """A function's parameters that a caller sets to switch what it does (`return_images=False`):
    each one's position among the arguments and its default, `True` or `False` as written."""
    found: dict[str, tuple[int, bool]] = {}
    for position, param in enumerate(unit.argument_params):
        default = literal_bool(param.default) if param.default is not None else None
        if default is not None:
            found[param.name.value] = (position, default)
    return found


def _flags_at(call: cst.Call, target: Unit, caller: Unit, flags: dict[str, tuple[int, bool]]) -> dict[str, bool]:
    """The value of each flag at a call, where the call shows it: a literal passed, or the default
    where nothing can pass it (no `*args`, and a `**mapping` only of a dict whose keys the caller
    writes as literals and that lacks the flag's name)."""
    if any(arg.star == "*" for arg in call.args):
        return {}
    given = arguments_by_position(call, target)
    mappings = [arg.value for arg in call.args if arg.star == "**"]
    known: dict[str, bool] = {}
    written: set[str] | None = None  # the keys the `**mappings` may carry: read once, when a flag is not passed
    for name, (position, default) in flags.items():
        if position in given:
            value = literal_bool(given[position])
            if value is not None:
                known[name] = value
            continue
        if written is None:
            written = set().union(*(_keys_written(mapping, caller) for mapping in mappings))
        if not {name, "*"} & written:
            known[name] = default
    return known


def _keys_written(mapping: cst.BaseExpression, unit: Unit) -> set[str]:
    """The keys of `forward_params` for `f(**forward_params)`: a local made as `{}` (or a display of
    string keys), filled only by `forward_params["text"] = ...` and handed to no other call;
    `{"*"}`, any name, when that is not so."""
    everything = {"*"}
    if type(mapping) is not cst.Name:
        return everything
    name = mapping.value
    made = unit.bindings.get(name, [])
    if not made or any(type(value) is not cst.Dict for value in made) or name in unit.augmented:
        return everything
    keys: set[str] = set()
    for element in (e for value in made for e in cast(cst.Dict, value).elements):
        key = string_value(element.key) if type(element) is cst.DictElement else None
        if key is None:
            return everything
        keys.add(key)
    for node in walk(unit.node):
        if type(node) is cst.Subscript and type(node.value) is cst.Name and node.value.value == name:
            index = node.slice[0].slice if len(node.slice) == 1 else None
            key = string_value(index.value) if type(index) is cst.Index else None
            if key is None:
                return everything
            keys.add(key)
        elif type(node) is cst.Call and (
            any(not arg.star and type(arg.value) is cst.Name and arg.value.value == name for arg in node.args)
            or (
                type(node.func) is cst.Attribute and type(node.func.value) is cst.Name and node.func.value.value == name
            )
        ):
            return everything  # `fill(forward_params)`, `forward_params.update(...)`: keys written elsewhere
    return keys


def _flagged_returns(
    summary_returns: tuple[Flagged, ...], known: dict[str, bool], elements: bool
) -> tuple[Value, ...] | None:
    """What the returns that the call's flags reach give (`_summarized_by`), joined."""
    reached = [r for r in summary_returns if all(known.get(name, value) == value for name, value in r.flags)]
    if not reached:
        return None
    if not elements:
        return (_joined([r.value for r in reached]),)
    shapes = {len(r.elements) if r.elements is not None else None for r in reached}
    if len(shapes) != 1 or None in shapes:
        return None
    return tuple(_joined(list(position)) for position in zip(*(r.elements or () for r in reached), strict=True))


def _joined(values: list[Value]) -> Value:
    """What one of the values is: the first joined with the others (a single value as it is)."""
    return reduce(Value.join, values)


def _leaves(block: cst.BaseSuite) -> bool:
    """Whether a block ends by returning or raising: the code after its `if` never follows it."""
    return isinstance(last_statement(block), (cst.Return, cst.Raise))


# Methods of torch.nn.Module that a tensor lacks, called for their effect on the module.
_MODULE_ONLY_METHODS = frozenset(
    ["eval", "train", "load_state_dict", "register_forward_hook", "register_forward_pre_hook"]
)
_SHAPE_ATTRIBUTES = frozenset(["shape", "device", "dtype", "ndim", "is_cuda", "layout"])
# A class and its names: as many keys as there are classes (`type(layer).__name__`).
_CLASS_ATTRIBUTES = frozenset(["__class__", "__name__", "__qualname__"])
# A size read off an object (`context.max_sequence_length`): as many keys as there are sizes.
_SIZE_WORDS = frozenset(["len", "length", "size", "dim", "width", "height", "depth", "shape"])


def _identity_names(node: cst.CSTNode) -> set[str]:
    """The names a key reads for what they are, not for their shape or class: in `(x.shape[-1],
    x.device)` or `type(x).__name__` none (a memo per shape or class takes a few values); in `x` or
    `id(x)`, `x` (new every call)."""
    if type(node) is cst.Attribute and (
        node.attr.value in _SHAPE_ATTRIBUTES
        or node.attr.value in _CLASS_ATTRIBUTES
        or set(node.attr.value.lower().split("_")) & _SIZE_WORDS  # `context.max_sequence_length`
    ):
        return set()
    if type(node) is cst.Call and callee_name(node) in ("size", "dim", "len", "type"):
        return set()
    if type(node) is cst.Call and type(node.func) is cst.Attribute:  # `x.max()` reads `x`
        return _identity_names(node.func.value) | {n for arg in node.args for n in _identity_names(arg)}
    if type(node) is cst.Name:
        return {node.value}
    if type(node) is cst.Attribute:
        return _identity_names(node.value)  # `x.name` reads x, not `name`
    if type(node) is cst.Arg:
        return _identity_names(node.value)  # a keyword's name is not a read
    if type(node) is cst.Lambda:
        return set()
    return {name for child in children(node) for name in _identity_names(child)}


def _drawn_anew(key: cst.BaseExpression) -> bool:
    """`next(self._ids)`, `uuid.uuid4()`, `str(uuid4())`: a value that each evaluation draws anew
    (from an iterator kept by name; not `next(iter(d))`, a dict's first key every time)."""
    while type(key) is cst.Call and callee_name(key) in ("str", "int", "hash") and len(key.args) == 1:
        key = key.args[0].value
    if type(key) is not cst.Call:
        return False
    name = callee_name(key)
    drawn = name == "next" and len(key.args) == 1 and isinstance(key.args[0].value, (cst.Name, cst.Attribute))
    return drawn or name in ("uuid1", "uuid4")


def _key_space_grows(param: cst.Param) -> bool:
    """Whether keys taken from a parameter keep changing: an input, a step, an id. A label (`name`,
    `key`, `tag`), an index into the model's structure (`layer_idx`), a setting with a literal
    default (`keyshift=0`) or another plain value (`offsets: tuple[int, int, int]`) takes a few
    values, unless named for a counter (`step: int`)."""
    words = set(param.name.value.lower().split("_"))
    if words & _LABEL_WORDS:
        return False
    default = param.default
    if isinstance(default, (cst.Integer, cst.Float, cst.SimpleString)) or (
        default is not None and literal_bool(default) is not None
    ):
        return bool(words & _COUNTER_WORDS)  # `keyshift=0`, `mode="bilinear"`: a setting, not an input
    annotation = annotation_words(param)
    plain = bool(annotation) and annotation <= _PLAIN_KEY_ANNOTATIONS
    return not plain or bool(words & _COUNTER_WORDS)


_PLAIN_KEY_ANNOTATIONS = _PYTHON_SCALAR_ANNOTATIONS | {"tuple", "Tuple"}
_COUNTER_WORDS = frozenset(
    ["id", "uid", "step", "iter", "batch", "epoch", "count", "time", "sample", "idx", "index", "pos", "position",
     "offset", "start", "seed", "token", "frame"]
)  # fmt: skip


_LABEL_WORDS = frozenset(
    ["name", "key", "k", "tag", "label", "metric", "stat", "field", "kind", "mode", "type", "layer", "level",
     "stage", "block", "head", "scale", "module", "split", "phase", "prefix",
     # a few values per process: devices, dtypes, ranks, the train/eval flag
     "device", "dev", "dtype", "rank", "training"]
)  # fmt: skip


def _reads_length_of(test: cst.BaseExpression, container: cst.BaseExpression) -> bool:
    """Whether a condition compares the container's length: `len(xs) < cap`."""
    return any(
        type(node) is cst.Call
        and callee_name(node) == "len"
        and bool(node.args)
        and same_code(node.args[0].value, container)
        for node in walk(test)
    )


def _deleted(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The targets of `del a, b[:]`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [element.value for element in target.elements]
    return [target]


def _is_whole_slice(target: cst.Subscript) -> bool:
    """`xs[:]`: every item."""
    if len(target.slice) != 1 or type(target.slice[0].slice) is not cst.Slice:
        return False
    whole = target.slice[0].slice
    return whole.lower is None and whole.upper is None and whole.step is None


def _own_graph_only(result: Value, own: Value) -> Value:
    """A helper's result, given tensors without a graph: the graph it makes itself (`own`, its
    result given nothing), entry by entry for a dict it builds, and no other."""
    keys = None
    if result.keys is not None and own.keys is not None:
        kept = dict(own.keys)
        keys = tuple((key, _own_graph_only(value, kept.get(key, UNKNOWN))) for key, value in result.keys)
    if own.graph:
        return replace(result, sources=own.sources, keys=keys)
    return replace(result, graph=False, sources=frozenset(), keys=keys)


def _graph_from(result: Value, graph_parameters: set[str]) -> Value:
    """A helper's result keeps a graph when it comes from a parameter given one, or from the
    helper's own computation (no parameter among its sources); not when it comes from an
    argument without one (`self.pe = self.extend_pe(x, self.pe)` returns `pe` as it was)."""
    if result.keys is not None:
        result = replace(result, keys=tuple((k, _graph_from(v, graph_parameters)) for k, v in result.keys))
    if result.graph and result.sources and not result.sources & graph_parameters:
        return replace(result, graph=False, sources=frozenset())
    return result


def _units_around(unit: Unit | None) -> Iterator[Unit]:
    while unit is not None:
        yield unit
        unit = unit.parent


def _join_values(values: Sequence[Value]) -> Value:
    joined = UNKNOWN
    for value in values:
        joined = joined.join(value)
    return joined


def _annotated_item_class(unit: Unit, name: str) -> str | None:
    node = unit.node
    params = all_params(node.params) if type(node) is cst.FunctionDef else []
    annotated: list[cst.Param | cst.AnnAssign] = [p for p in params if p.name.value == name]
    annotated += [
        statement
        for statement, _ in placed(unit, cst.AnnAssign)
        if type(statement.target) is cst.Name and statement.target.value == name
    ]
    return element_class(annotation_words(annotated[0])) if len(annotated) == 1 else None


def _forward_param_is_tensor(param: cst.Param, words: set[str]) -> bool:
    if words:
        return any(w.endswith("Tensor") for w in words)
    if names_a_count(param.name.value):
        return False  # `forward(self, x, seq_len=None)`: a length, a Python int
    if set(param.name.value.lower().split("_")) & _LOCATION_WORDS:
        return False  # `forward(self, source_dir)`: a pipeline's input is a folder or a file, text
    default = param.default
    if default is None:
        return True
    return type(default) is cst.Name and default.value == "None"


# Where data is, not the data: `source_dir`, `image_path`, `out_file` (not `text`, which may be token ids).
_LOCATION_WORDS = frozenset(["dir", "directory", "folder", "path", "paths", "file", "files", "filename", "url"])


def _function_name(value: cst.BaseExpression, unit: Unit) -> str | None:
    """The name of a function stored by its name (`= ppo_critic_loss`), not of a parameter or a local."""
    if type(value) is not cst.Name or value.value in unit.bindings:
        return None
    return None if any(param.name.value == value.value for param in unit.params) else value.value


def _join_env(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    joined = dict(a)
    for name, value in b.items():
        joined[name] = joined[name].join(value) if name in joined else value
    # An attribute of `self` set on one path only is read as the class sets it anywhere.
    return {name: value for name, value in joined.items() if "." not in name or (name in a and name in b)}


def _inherits_a_layer(facts: Facts, cls: ClassInfo) -> bool:
    """A subclass of a torch.nn layer (`nn.Conv2d`, not `nn.Module`), or a mixin that such a
    subclass in the file uses: `self.weight` and `self.bias` are the layer's, never assigned."""
    family = lineage(facts.index.classes, cls)
    if not cls.is_module:
        family = heirs(facts.index.classes, cls)
    layers = (
        base.rsplit(".", 1)[-1] for each in family for base in each.base_names if base and base.startswith("torch.nn.")
    )
    return any(
        layer[:1].isupper() and layer not in _CONTAINER_LAYERS and not layer.endswith("Loss") for layer in layers
    )


_CONTAINER_LAYERS = frozenset(["Module", "ModuleList", "ModuleDict", "Sequential", "Parameter"])


def attribute_value(facts: Facts, cls: ClassInfo, attribute: str) -> Value:
    """What the assignments to `self.<attribute>` anywhere in the class make it."""
    key = (id(cls), attribute)
    cached = facts.attribute_cache.get(key)
    if cached is not None:
        return cached
    facts.attribute_cache[key] = UNKNOWN  # guards self.a = self.b; self.b = self.a
    classes = attribute_family(facts.index.classes, cls, attribute)
    value = MODULE if any(attribute in c.module_attributes for c in classes) else UNKNOWN
    frozen_when_made = []  # `self.net = vgg16().eval().requires_grad_(False)`, per assignment
    for expr, unit in (pair for c in classes for pair in c.attribute_values.get(attribute, [])):
        assigned = evaluate(expr, _walker_at_end(facts, unit, expr))
        given = _unmoved(expr)
        if type(given) is cst.Name and unit.name == "__init__" and assigned.instance is None:
            # `self.model = model`, `self.criterion = criterion.cuda()`: an instance of the class
            # that the file's constructions pass, and a network they all pass frozen
            # (`Sampler(net)` after `net.requires_grad_(False)`) is frozen here too
            constructed = _constructed(facts, unit, given.value)
            frozen = assigned.frozen or (assigned.module and constructed.module and constructed.frozen)
            assigned = replace(assigned, instance=constructed.instance, frozen=frozen)
        value = value.join(assigned)
        frozen_when_made.append(assigned.frozen)
    if value.instance is None:
        value = replace(value, instance=_item_instance(facts, classes, attribute))
    if value.instance is None and not any(attribute in c.attribute_values for c in classes):
        value = replace(value, instance=_back_reference(facts, attribute))
    frozen = any(attribute in c.frozen_attributes for c in classes) or (
        bool(frozen_when_made) and all(frozen_when_made)
    )
    if value == UNKNOWN and attribute in PARAMETER_ATTRIBUTES and _inherits_a_layer(facts, cls):
        value = TENSOR if frozen else PARAMETER  # `self.weight` of `class SNConv2d(nn.Conv2d)`
    value = Value(
        tensor=value.tensor,
        module=value.module,
        cuda=value.cuda,
        instance=value.instance,
        frozen=frozen,
        requires_grad=value.requires_grad and not frozen,
        graph=value.graph and not frozen,
    )
    if cls.is_record:  # a record handed around within a step: what the step writes in it, graph included
        value = value.join(_written_from_outside(facts, cls, attribute))
    facts.attribute_cache[key] = value
    return value


def items_value(facts: Facts, cls: ClassInfo, attribute: str) -> Value:
    """What the assignments to `self.<attribute>[key]` anywhere in the class put in it: what
    `self.state["loss"]` read in another method is (its tensors, their graph, their device)."""
    key = (id(cls), f"{attribute}[]")
    cached = facts.attribute_cache.get(key)
    if cached is not None:
        return cached
    facts.attribute_cache[key] = UNKNOWN  # guards self.d[k] = self.d[j]
    value = UNKNOWN
    for expr, unit in (
        pair for c in attribute_family(facts.index.classes, cls, attribute) for pair in c.item_values.get(attribute, [])
    ):
        item = evaluate(expr, _walker_at_end(facts, unit, expr))
        value = value.join(Value(tensor=item.tensor, graph=item.graph, cuda=item.cuda))
    facts.attribute_cache[key] = value
    return value


def _walker_at_end(facts: Facts, unit: Unit, *exprs: cst.BaseExpression) -> _Walker:
    """A walker of the unit holding the names it has at its end, to evaluate its `exprs` in."""
    if id(unit) in facts.walks_pending and any(not unit.bindings.keys().isdisjoint(names_in(e)) for e in exprs):
        # a method that the walk reaches later (`end_of_batch_log` above `batch_step`, which
        # sets `self.batch_loss = loss`): walked now for its names, its events left to its own walk
        _Walker(_scratch(facts), unit).run()
    walker = _Walker(facts, unit)
    walker._bind_params()
    walker.env.update(facts.names_at_end(unit) or {})
    return walker


def cuda_work_in(facts: Facts, unit: Unit) -> list[CudaWork]:
    """The CUDA work of a unit, by a walk of it now (its own walk records none where the pass did
    not walk it: an `__init__` that only sets attributes)."""
    scratch = _scratch(facts)
    _Walker(scratch, unit).run()
    return scratch.cuda_work


def _written_from_outside(facts: Facts, cls: ClassInfo, attribute: str) -> Value:
    """What the module's code writes into a record's field from outside it: `self.state.loss =
    self._step(batch)` in a runner, for the `RunState` its callbacks read (`state.loss`)."""
    value = UNKNOWN
    for owner, written, unit in facts.index.foreign_writes.get(attribute, []):
        walker = _walker_at_end(facts, unit, owner, written)
        if evaluate(owner, walker).instance == cls.name:
            value = value.join(evaluate(written, walker))
    return value


def _item_instance(facts: Facts, classes: list[ClassInfo], attribute: str) -> str | None:
    """The class of the file whose instances `self.<attribute>[key] = Meter()` puts in the
    container, when every such assignment makes one of the same class: a container's value
    stands for its items, as for `{"loss": Meter()}`."""
    made = {
        callee_name(expr) if type(expr) is cst.Call else expr.value if type(expr) is cst.Name else None
        for c in classes
        for expr, _ in c.item_values.get(attribute, [])
    }
    name = made.pop() if len(made) == 1 else None
    return name if name is not None and facts.class_of(name) is not None else None


def _back_reference(facts: Facts, attribute: str) -> str | None:
    """The class whose methods hand their own object to others under this attribute, when one
    class does and nothing else writes it (`cb.learn = self` in a `Learner`, for the callbacks'
    `self.learn.loss`): what the attribute of an object that never sets it holds."""
    writes = facts.index.foreign_writes.get(attribute, [])
    owners = {
        unit.cls.name if unit.cls is not None and type(value) is cst.Name and value.value == unit.self_name else None
        for _, value, unit in writes
    }
    name = owners.pop() if len(owners) == 1 else None
    return name if name is not None and facts.class_of(name) is not None else None


# Methods of builtin containers and queues besides STORE_METHODS: a file's class defining one is
# not evidence that an unknown receiver is its instance.
_CONTAINER_METHODS = frozenset(["get", "pop", "remove", "clear", "copy", "put", "write", "send", "count", "index"])


def _wraps(expr: cst.BaseExpression, name: str) -> bool:
    """`f(name, ...)`: a call given the name itself first."""
    return (
        type(expr) is cst.Call
        and bool(expr.args)
        and expr.args[0].keyword is None
        and type(expr.args[0].value) is cst.Name
        and expr.args[0].value.value == name
    )


def _always_run(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """The statements that run whenever the block does: into `with` bodies, `try` bodies and `if
    True:`, not into branches or loops."""
    for statement in statements:
        yield statement
        always = isinstance(statement, (cst.With, cst.Try)) or (
            type(statement) is cst.If and type(statement.test) is cst.Name and statement.test.value == "True"
        )
        body = statement.body if always and isinstance(statement, (cst.With, cst.Try, cst.If)) else None
        if type(body) is cst.IndentedBlock:
            yield from _always_run(body.body)


def _windowed(value: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """`self.bank = (self.bank + [x])[-n:]`, `self.bank = self.bank[-n:]`: a window of the last n
    items, each kept as it is; nothing is chained onto the container's history."""
    if type(value) is not cst.Subscript or len(value.slice) != 1 or type(value.slice[0].slice) is not cst.Slice:
        return False
    kept = value.value
    return same_code(kept, target) or list_extension(target, kept) is not None


def _written_names(node: cst.CSTNode) -> set[str]:
    """The dotted names a statement assigns: `self.timesteps` of `self.timesteps += 1`."""
    if type(node) is cst.Assign:
        targets = [t.target for t in node.targets]
    elif type(node) is cst.AugAssign:
        targets = [node.target]
    else:
        return set()
    return {name for target in targets if (name := dotted_name(target)) is not None}


def _in_init(node: cst.CSTNode, cls: ClassInfo) -> bool:
    init = cls.methods.get("__init__")
    return init is not None and contains(init, node)


def _names_a_state_dict(iterable: cst.BaseExpression, unit: Unit) -> bool:
    """`model.state_dict()`, or a name for one (`state_dict`, `sd = model.state_dict()`)."""
    if type(iterable) is cst.Call:
        return callee_name(iterable) == "state_dict"
    if type(iterable) is not cst.Name:
        return False
    bound = unit.lookup_bindings(iterable.value)
    if bound:
        return all(type(value) is cst.Call and callee_name(value) == "state_dict" for value in bound)
    return iterable.value in ("state_dict", "model_state_dict")


def _bound_to_a_dict(iterable: cst.BaseExpression, unit: Unit) -> bool:
    """`metrics = {k: float(v) for k, v in out.items()}` among the name's bindings: a dict, whose
    loop goes over its keys (a metric's name), whatever the name's other bindings give (not an
    empty `{}`, a placeholder before the value)."""
    if type(iterable) is not cst.Name:
        return False
    return any(
        type(value) is cst.DictComp or (type(value) is cst.Dict and value.elements)
        for value in unit.lookup_bindings(iterable.value)
    )


def _slot(target: cst.Subscript) -> str:
    """A subscript target by its text (`g.edata['a']`), as `fresh` knows it (never a plain name):
    Python's own spelling of it, so that `g.edata["a"]` and `g.edata['a']` are one slot."""
    text = cst.Module([]).code_for_node(target).strip()
    try:
        return ast.unparse(ast.parse(text, mode="eval"))
    except SyntaxError:  # syntax newer than the Python running this
        return text


def _local_scope_of(expr: cst.BaseExpression, method: str = "local_scope") -> str | None:
    """`g` for DGL's `g.local_scope()`, in whose block the features written into `g` are undone at
    its end; with `method="local_var"`, for `g.local_var()`, a copy whose features go with it."""
    if type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Attribute and expr.func.attr.value == method:
        return dotted_name(expr.func.value)
    return None


def _constructed(facts: Facts, init: Unit, param: str) -> Value:
    """What the file's `Cls(...)` calls give `__init__`'s parameter, joined: `Collator(torch.device("cuda"))`,
    `Collator(device)` after `device = "cuda"`, `Step(model)` for a parameter `model: Tagger`."""
    joined: Value | None = None  # (joined with what is passed, not with nothing: a frozen network stays frozen)
    for arg, caller in constructor_arguments(facts.index, init, param):
        scope = _Walker(facts, caller)
        at_end = facts.names_at_end(caller)
        if at_end is not None:
            scope.env.update(at_end)
        else:
            scope._bind_params()
        # A caller not walked yet: what its assignments bind the name to (`device = "cuda"`), and
        # the names those read (`device = torch.device(args.device)` after `args = p.parse_args()`);
        # a name unpacked from a helper's tuple, its element (`net, cfg = load_model(path)`).
        given = caller.bindings.get(arg.value, [arg]) if type(arg) is cst.Name and at_end is None else [arg]
        if at_end is None:
            _bind_read_names(scope, caller, given, depth=2)
        values = [evaluate(value, scope) for value in given]
        if not given and type(arg) is cst.Name and (element := _unpacked_element(scope, caller, arg.value)):
            values.append(element)
        for value in values:
            joined = value if joined is None else joined.join(value)
    return joined if joined is not None else UNKNOWN


def _unpacked_element(scope: _Walker, unit: Unit, name: str) -> Value | None:
    """What `a, b = helper(...)` binds `name` to, by the helper's summary, where that is the one
    binding of `name` in `unit`."""
    found = [
        (node.value, position)
        for node, _ in placed(unit, cst.Assign)
        if type(node.value) is cst.Call
        and len(node.targets) == 1
        and isinstance(target := node.targets[0].target, (cst.Tuple, cst.List))
        for position, element in enumerate(target.elements)
        if type(element.value) is cst.Name and element.value.value == name
    ]
    if len(found) != 1:
        return None
    call, position = found[0]
    elements = scope.summarized_elements(call)
    return elements[position] if elements is not None and position < len(elements) else None


def _bind_read_names(scope: _Walker, unit: Unit, values: list[cst.BaseExpression], depth: int) -> None:
    """Give `scope` the names that `values` read and `unit` binds once, from that binding."""
    for name in {n for value in values for n in names_in(value)}:
        bound = unit.bindings.get(name, [])
        if depth and len(bound) == 1 and name not in scope.env:
            _bind_read_names(scope, unit, bound, depth - 1)
            scope.env[name] = evaluate(bound[0], scope)


_MAX_REPLAY_DEPTH = 3  # helpers of helpers of helpers; a recursive helper stops there


class _Substitution(cst.CSTTransformer):
    """Parameter names replaced by the caller's argument expressions; attribute and keyword
    names stay as they are."""

    def __init__(self, given: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.given = given

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # `.attr` is not a parameter: only the value is replaced (in leave)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.given.get(original_node.value, updated_node)


BUILTIN_NAMES = frozenset(dir(builtins))  # (also TL007: the calls that run no code of a package)
_MAX_BASE_MODULES = 3  # modules read, base after base: whether a class is a torch module, what it inherits


def _one_definer(facts: Facts, method_name: str, of_a_module: bool) -> tuple[Facts, Unit] | None:
    """The method of the module's one class that defines `method_name`, or of one family: a base
    whose method is abstract and the subclasses that override it (`for cb in self.callbacks:
    cb.on_batch_end(...)` runs any of them)."""
    index = facts.index
    definers = [cls for cls in index.classes.values() if method_name in cls.methods]
    roots = [cls for cls in definers if not any(c in definers for c in lineage(index.classes, cls)[1:])]
    if len(roots) != 1 or (of_a_module and not roots[0].is_module):
        return None
    method = index.method_units[id(roots[0].methods[method_name])]
    if len(definers) > 1 and len(overrides(index, method)) != len(definers) - 1:
        return None
    return facts, method


def resolve_import(facts: Facts, name: str) -> tuple[Facts, str] | None:
    """The analysed module defining an imported name, and the name there: imported by name, or
    from a module the file star-imports (`from jtnn import *`; the first that defines it)."""
    if facts.project is None or facts.path is None:
        return None
    origin = facts.imports.origin(name)
    origins = [origin] if origin is not None else [f"{module}.{name}" for module in facts.imports.starred]
    for candidate in origins:
        resolved = facts.project.resolve(facts.path, candidate, _analyze_imported)
        if resolved is not None:
            return resolved.facts, resolved.name
    return None


def _moves_to_cuda(facts: Facts, unit: Unit, depth: int = 0) -> cst.Call | None:
    """The first call in a function of another module, or in the functions of that module it
    calls by name, that moves a tensor to CUDA by what it says: `.cuda()`, a `"cuda"` device."""
    for call, _ in placed(unit, cst.Call):
        if callee_name(call) == "cuda" and receiver(call) is not None:
            return call  # `.cuda()`, `.cuda(non_blocking=True)`, `.cuda(rank)`
        if callee_name(call) in ("to", "device") or any(a.keyword and a.keyword.value == "device" for a in call.args):
            said = [a.value for a in call.args if a.keyword is None or a.keyword.value == "device"]
            if any(type(v) is cst.SimpleString and (string_value(v) or "").startswith("cuda") for v in said):
                return call  # `.to("cuda")`, `torch.device("cuda:0")`, `torch.zeros(n, device="cuda")`
        if depth < 2 and type(call.func) is cst.Name:
            helper = unit.lookup_def(call.func.value)
            found = _moves_to_cuda(facts, helper, depth + 1) if helper is not None and helper is not unit else None
            if found is not None:
                return found
    return None


def _emptied_by_its_class(facts: Facts, method: Unit, attribute: str) -> bool:
    """Whether the class of `method` (in the module `facts` describes) empties `self.<attribute>`
    in one of its methods."""
    if method.cls is None or method.self_name is None or not attribute:
        return False
    kept = cst.Attribute(cst.Name(method.self_name), cst.Name(attribute.split(".")[0]))
    return facts.container_kind(method, kept)[1] == "managed"


def _inherited_method(facts: Facts, cls: ClassInfo, method_name: str) -> tuple[Facts, Unit] | None:
    """The method a class defines or inherits, from bases of this module or of other modules of
    the project (`class Trainer(BaseTrainer)`, `BaseTrainer.record` in `base.py`)."""
    for where, ancestor in _ancestors_across(facts, cls):
        method = ancestor.methods.get(method_name)
        if method is not None:
            return where, where.index.method_units[id(method)]
    return None


def _module_class_across(facts: Facts, cls: ClassInfo) -> bool:
    """Whether a class of another module is a torch module through bases imported from further
    modules of the project (`class ComponentModel(LoadableModule)`, `LoadableModule(nn.Module)`)."""
    return any(ancestor.is_module for _, ancestor in _ancestors_across(facts, cls))


def _ancestors_across(facts: Facts, cls: ClassInfo, depth: int = 0) -> Iterator[tuple[Facts, ClassInfo]]:
    """The class and its ancestors, each with its module's facts: those of its own module first
    (`lineage`), then those that other modules of the project define, nearest first, read when
    first asked and followed at most `_MAX_BASE_MODULES` modules deep."""
    for ancestor in lineage(facts.index.classes, cls):
        yield facts, ancestor
    if depth < _MAX_BASE_MODULES:
        for base in _imported_bases(facts, cls):
            yield from _ancestors_across(*base, depth + 1)


def _bases_elsewhere(facts: Facts, cls: ClassInfo) -> Iterator[tuple[Facts, ClassInfo]]:
    """The ancestors of the class that other modules of the project define, nearest first."""
    for base in _imported_bases(facts, cls):
        yield from _ancestors_across(*base, depth=1)


def _imported_bases(facts: Facts, cls: ClassInfo) -> Iterator[tuple[Facts, ClassInfo]]:
    """The bases of the class and of its bases in this module that other modules of the project
    define, nearest first, each with its module's facts (read when first asked)."""
    if facts.project is None or facts.path is None:
        return
    for ancestor in lineage(facts.index.classes, cls):
        for name in ancestor.base_names:  # qualified by the imports: `spd.interfaces.LoadableModule`
            if not name or name in facts.index.classes:
                continue
            # qualified by an absolute import, or (`from .base import BaseAgent`) by where it comes from
            resolved = facts.project.resolve(facts.path, name, _analyze_imported)
            there = (resolved.facts, resolved.name) if resolved is not None else resolve_import(facts, name)
            found = there[0].index.classes.get(there[1]) if there is not None else None
            if found is not None and there is not None:
                yield there[0], found


def _analyze_imported(module: cst.Module, path: Path, project: Project) -> Facts:
    """A module the checked file imports is read for its summaries: its body alone is walked."""
    return analyze(module, path=path, project=project, only_module_body=True)


def _own_item(loop: cst.For, unit: Unit, name: str) -> cst.Subscript | None:
    """`self.curves[key]` for `values` of `for key, values in self.curves.items():`, unless the
    loop's body binds it again."""
    item, held = own_container_items(loop, unit)
    if item != name or held is None or _rebinds(loop.body, name):
        return None
    key = loop.target.elements[0].value if type(loop.target) is cst.Tuple else cst.Name("_")
    return cst.Subscript(held, [cst.SubscriptElement(cst.Index(key))])


def _handed_own_container(unit: Unit, name: str, depth: int = 0) -> cst.BaseExpression | None:
    """What every call of the method on `self` hands its parameter `name` of the object's own
    containers: `self.feats`, `self.taps[name]`, the item variable of a loop over one, or what the
    calling method was handed so."""
    params = [p.name.value for p in unit.argument_params]
    if not unit.is_method or not unit.call_sites or name not in params or depth > 3:
        return None
    handed: list[cst.BaseExpression] = []
    for call, caller in unit.call_sites:
        func = call.func
        if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == caller.self_name):
            return None  # not a call on `self`
        arg = arguments_by_position(call, unit).get(params.index(name))
        held = None
        if arg is not None and self_attribute(caller, outer_container(arg)) is not None:
            held = arg
        elif type(arg) is cst.Name:
            place = next((place for node, place in placed(caller, cst.Call) if node is call), NOWHERE)
            loop = next((loop for loop in reversed(place.loops) if arg.value in _for_targets(loop)), None)
            if type(loop) is cst.For:
                held = _own_item(loop, caller, arg.value)
            elif loop is None:
                held = _handed_own_container(caller, arg.value, depth + 1)
        if held is None or (handed and not same_code(held, handed[0])):
            return None
        handed.append(held)
    return handed[0]


def _dict_of_made_tensors(value: cst.BaseExpression, imports: Imports) -> bool:
    """`{name: torch.zeros(n) for name in names}`, `{"a": -1 * torch.ones(n)}`: every value a tensor made by torch."""
    if type(value) is cst.DictComp:
        items = [value.value]
    elif type(value) is cst.Dict:
        items = [e.value for e in value.elements if type(e) is cst.DictElement]
    else:
        return False
    return bool(items) and all(_made_by_torch(item, imports) for item in items)


def _made_by_torch(expr: cst.BaseExpression, imports: Imports) -> bool:
    """`torch.zeros(n)`, scaled or negated: `-torch.ones(n)`, `-1 * torch.ones(n)`."""
    if type(expr) is cst.UnaryOperation:
        return _made_by_torch(expr.expression, imports)
    if type(expr) is cst.BinaryOperation:
        return _made_by_torch(expr.left, imports) or _made_by_torch(expr.right, imports)
    return type(expr) is cst.Call and (imports.qualify(expr.func) or "").startswith("torch.")


def _kept_where(call: cst.Call, helper: Unit, kept_in: str) -> cst.BaseExpression:
    """What a helper's store into `kept_in` grows, seen from its call: the attribute of the object
    it is called on (`meter.sum`; an item of a container of them, `meters["loss"]`, as the
    container's); for a plain function, the global."""
    owner = receiver(call) if helper.is_method else None
    while type(owner) is cst.Call and type(owner.func) is cst.Attribute:
        owner = owner.func.value  # `meters.get_meter("loss").update(v)`: state that `meters` holds
    head, _, attribute = kept_in.partition(".")
    if owner is not None and attribute and head == helper.self_name and type(owner) is not cst.Subscript:
        return cst.Attribute(owner, cst.Name(attribute.split(".")[0]))
    return owner if owner is not None else cst.Name(head)


def _kept_name(target: cst.BaseExpression, unit: Unit) -> str:
    """How a summary names what a store grows: `self.meters`; `self[...]`, the items of a dict's
    subclass; `self._history` for `history._data` after `history = self._history[name]`."""
    name = root_name(target) or "a container"
    if name == unit.self_name and type(target) is cst.Subscript:
        return f"{name}[...]"
    head = name.partition(".")[0]
    held = kept_object(unit, head) if head != unit.self_name else None
    return dotted_name(held) or name if held is not None else name


def _for_targets(loop: cst.For | cst.While) -> set[str]:
    return target_names(loop.target) if type(loop) is cst.For else set()


def _rebinds(body: cst.BaseSuite, name: str) -> bool:
    """Whether the block binds `name` to another object (`values = []`; not `values += [h]`,
    which extends the list in place)."""
    return any(
        (type(node) is cst.Assign and any(name in target_names(t.target) for t in node.targets))
        or (type(node) in (cst.AnnAssign, cst.For) and name in target_names(node.target))  # type: ignore[attr-defined]
        for node in own_nodes(body)
    )


def summary_of(facts: Facts, unit: Unit) -> Summary:
    """The unit's summary, computed once; NO_SUMMARY while it is being computed (recursion)."""
    known = facts.summaries.get(id(unit))
    if known is None:
        facts.summaries[id(unit)] = NO_SUMMARY
        known = facts.summaries[id(unit)] = summarize(facts, unit)
    return known


def summarize(facts: Facts, unit: Unit) -> Summary:
    """Walk a function twice: with arguments of unknown value, and with arguments that carry a graph
    (once when it has no parameter to bind: the two walks would be the same)."""
    if type(unit.node) is not cst.FunctionDef:
        return NO_SUMMARY
    params = [p.name.value for p in unit.argument_params]
    # Without a parameter the two walks are the same; without a returned value the plain walk
    # gives nothing that the walk given a graph does not (its events are dropped).
    returns_value = any(ret.value is not None for ret, _ in placed(unit, cst.Return))
    scratch = _scratch(facts)
    plain = given_graph = _Walker(scratch, unit, arguments=UNKNOWN if returns_value or not params else GRAPH)
    plain.run()
    if params and returns_value:
        scratch = _scratch(facts)
        given_graph = _Walker(scratch, unit, arguments=GRAPH)
        given_graph.run()
    forwarded = _argument_statements(unit, set(params))
    replayed = {id(n) for statement in forwarded for n in (statement, *walk(statement))}
    keeps: dict[int, tuple[str, bool]] = {}
    appends_into: dict[int, int] = {}
    under_key: dict[int, tuple[int, int]] = {}
    as_is: set[int] = set()
    for_the_run: set[int] = set()
    copies: dict[int, str] = {}
    events: list[Accumulation | Store] = [*scratch.accumulations, *scratch.stores]
    for event in events:
        if id(event.node) in replayed:
            continue  # judged at each call, with the caller's arguments
        target = event.target if isinstance(event, Accumulation) else event.container
        sources = event.value.sources & set(params)
        as_is |= {params.index(name) for name in _displayed_names(event.value_expr, unit.bindings) & sources}
        key = _key_parameter(event, params) if isinstance(event, Store) else None
        if key is not None and type(target) is cst.Name and target.value in params:
            for source in sources:  # `container[key] = value`: the caller's key decides
                under_key[params.index(source)] = (params.index(target.value), params.index(key))
            continue
        copied = _copied_parameter(event.value_expr, params) if isinstance(event, Store) and event.grows else None
        if copied is not None and not event.value.graph:
            lifetime, kind = facts.container_kind(unit, target)
            if lifetime in ("attribute", "global") and kind in ("list", "dict"):
                copies[params.index(copied)] = root_name(target) or "a container"
        if not event.value.graph or (isinstance(event, Store) and not event.grows):
            continue  # a write under a fixed key replaces, it does not keep
        container = root_name(target)  # `state["emb"] = torch.cat([state["emb"], x])` grows `state`
        if isinstance(event, Store) and container in params:
            for source in sources:
                appends_into[params.index(source)] = params.index(container)
            continue
        lifetime, kind = facts.container_kind(unit, target)
        if lifetime in ("attribute", "global") and kind != "bounded":  # not a `deque(maxlen=n)` window
            for source in sources:
                appended = isinstance(event, Store) or event.appended  # itself, or through its own helper
                keeps[params.index(source)] = (_kept_name(target, unit), appended)
                # A list or dict that nothing empties, here or in the helper this one hands it to
                # (`put_scalars(**kw)` calling `put_scalar(k, v)` for each: `kw` is kept too).
                if (isinstance(event, Store) and kind in ("list", "dict")) or event.for_the_run:
                    for_the_run.add(params.index(source))
    returns_plain, elements_plain = _as_annotated(unit, plain.returns, plain.elements)
    returns_given_graph, elements_given_graph = _as_annotated(unit, given_graph.returns, given_graph.elements)
    # (an annotated return says what every call gets: `_as_annotated`)
    flagged = any(r.flags for r in plain.flagged) and unit.node.returns is None
    return Summary(
        keeps,
        appends_into,
        returns_plain,
        returns_given_graph,
        elements_plain,
        elements_given_graph,
        under_key,
        frozenset(as_is),
        forwarded,
        tuple(params),
        frozenset(for_the_run),
        copies,
        _captured_kept(scratch, given_graph, params),
        tuple(plain.flagged) if flagged else (),
        tuple(given_graph.flagged) if flagged else (),
    )


def _as_annotated(
    unit: Unit, returns: Value, elements: tuple[Value, ...] | None
) -> tuple[Value, tuple[Value, ...] | None]:
    """What a function returns, where its return annotation says Python numbers (`-> float`,
    `-> list[float]`, `-> dict[str, float]`) or a tuple with numbers at some positions
    (`-> tuple[torch.Tensor, float]`): what the walk cannot see is often a number (a meter's
    `get_stats()` reading its own lists, a ratio of `.item()` counts), and a parameter's
    annotation is trusted as much (`H: int`)."""
    if annotated_plain(unit):
        return SCALAR, None if elements is None else tuple(SCALAR for _ in elements)
    node = unit.node
    annotation = node.returns.annotation if type(node) is cst.FunctionDef and node.returns else None
    if type(annotation) is not cst.Subscript or dotted_name(annotation.value) not in ("tuple", "Tuple", "typing.Tuple"):
        return returns, elements
    positions = [e.slice.value for e in annotation.slice if type(e.slice) is cst.Index]
    if len(positions) != len(annotation.slice) or any(type(p) is cst.Ellipsis for p in positions):
        return returns, elements  # `tuple[float, ...]` is a number whole, answered above
    if elements is not None and len(elements) != len(positions):
        return returns, elements  # the annotation does not say what the code returns
    walked = elements or tuple(returns for _ in positions)
    return returns, tuple(SCALAR if _numbers_annotated(p) else v for p, v in zip(positions, walked, strict=True))


# The containers of `_numbers_annotated` (and `typing.`, `Optional`, `None` around them).
_CONTAINER_ANNOTATIONS = frozenset(
    ["list", "List", "dict", "Dict", "tuple", "Tuple", "Sequence", "Mapping", "Union", "typing"]
)


def annotated_plain(unit: Unit) -> bool:
    """A function whose return annotation says Python numbers or strings (`-> str`, `-> float`)."""
    node = unit.node
    return type(node) is cst.FunctionDef and node.returns is not None and _numbers_annotated(node.returns.annotation)


def _numbers_annotated(annotation: cst.BaseExpression) -> bool:
    """`float`, `Optional[int]`, `list[float]`, `dict[str, float]`: Python numbers (or strings)."""
    words = expression_words(annotation)
    plain = _PYTHON_SCALAR_ANNOTATIONS - {"Optional", "None"}
    return bool(words & plain) and words <= _PYTHON_SCALAR_ANNOTATIONS | _CONTAINER_ANNOTATIONS


def _captured_kept(scratch: Facts, walker: _Walker, params: list[str]) -> dict[int, tuple[str, bool]]:
    """The arguments that a closure made by the function captures where it outlives the call
    (`self._pending.append(lambda: log(tag, float(value)))`, or through its own helper), read
    from the walk given a graph: a captured local's sources are the arguments it came from."""
    found: dict[int, tuple[str, bool]] = {}
    for escape in scratch.escapes:
        if escape.lifetime not in ("attribute", "global"):
            continue  # handed back to the caller, in a list of the call's own or of the caller's
        sources = {s for name in escape.captured for s in walker.env.get(name, UNKNOWN).sources} & set(params)
        sources |= set(escape.captured) & set(params)
        for source in sources:
            found[params.index(source)] = (escape.how, escape.managed)
    return found


# Methods that copy a tensor where it is, at its size: `x.detach()` keeps no graph, but as much memory.
_COPIES = frozenset(["detach", "clone", "contiguous"])


def _copied_parameter(expr: cst.BaseExpression, params: list[str]) -> str | None:
    """The parameter that `x.detach()`, `x.detach().clone()` copies."""
    copied = False
    while type(expr) is cst.Call and callee_name(expr) in _COPIES and (inner := receiver(expr)) is not None:
        expr, copied = inner, True
    return expr.value if copied and type(expr) is cst.Name and expr.value in params else None


def _handed_the_network(unit: Unit) -> bool:
    """A criterion's `forward(self, model, sample)`: the network is its first argument."""
    params = unit.argument_params if type(unit.node) is cst.FunctionDef else []
    return bool(params) and is_model_name(params[0].name.value)


def _acted_on(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """What a statement writes into (`owner.buf` in `owner.buf = v`) or calls a method of."""
    if type(statement) is cst.Assign:
        return [t.target for t in statement.targets]
    if type(statement) is cst.AugAssign:
        return [statement.target]
    if type(statement) is cst.Expr and type(statement.value) is cst.Call:
        func = statement.value.func
        if type(func) is not cst.Attribute:
            return []
        owner = func.value
        while type(owner) is cst.Call and type(owner.func) is cst.Attribute:
            owner = owner.func.value  # `self.get_meter(key).update(value)`: a method of what `self` hands out
        return [owner]
    return []


def _argument_statements(unit: Unit, params: set[str]) -> tuple[cst.BaseSmallStatement, ...]:
    """The helper's statements that act only on its arguments: an assignment into an attribute
    or a slot of one (`owner.buf = value`, `container[key] += value`), or a call of a method of
    one (`meter.update(value)`), reading nothing but the arguments and the module's names; and a
    method's assignment into its object's container under a key from its arguments
    (`self._cache[key] = value`)."""
    local = set(
        unit.bindings
    )  # a parameter rebound here (`value = value.item()`) is not the caller's argument any more
    numbers = _number_branches(unit, params)
    found: list[cst.BaseSmallStatement] = []
    for kind in (cst.Assign, cst.AugAssign, cst.Expr):
        for statement, _ in placed(unit, kind):
            targets = _acted_on(statement)
            on_argument = all(
                isinstance(t, (cst.Attribute, cst.Subscript, cst.Name))
                and (
                    (root_name(t) or "").split(".")[0] in params
                    or (type(statement) is cst.Assign and _keyed_by_argument(t, unit, params))
                )
                for t in targets
            )
            bare = any(type(t) is cst.Name for t in targets) and type(statement) is not cst.Expr
            number = numbers.get(id(statement))
            if (
                targets
                and on_argument
                and not bare
                and not names_in(statement) & local
                and number not in names_in(statement)
            ):
                found.append(statement)
    return tuple(found)


def _number_branches(unit: Unit, params: set[str]) -> dict[int, str]:
    """The nodes under an `if` where a parameter is a Python number (`if type(v) == float:`, the
    `else` of `if not isinstance(v, (int, float)):`), with its name: what they store of it there
    is no tensor, whatever the caller passes."""
    found: dict[int, str] = {}
    for branch, _ in placed(unit, cst.If):
        numbered = number_guard(branch.test)
        if numbered is None or numbered[0] not in params:
            continue
        block = branch.body if numbered[1] else branch.orelse
        if block is not None:
            found.update((id(node), numbered[0]) for node in walk(block))
    return found


def _keyed_by_argument(target: cst.BaseExpression, unit: Unit, params: set[str]) -> bool:
    """`self._cache[key] = value` in a method, under a key the caller passes: whether it adds an
    entry at each call depends on the caller's key (a memo keyed by the input grows). (What a
    method appends or adds to `self.stats[key]` is in its summary: kept whatever the key.)"""
    return (
        type(target) is cst.Subscript
        and unit.self_name is not None
        and (root_name(target.value) or "").split(".")[0] == unit.self_name
        and any(names_in(element.slice) & params for element in target.slice)
    )


def _displayed_names(expr: cst.BaseExpression, bound: Mapping[str, list[cst.BaseExpression]]) -> set[str]:
    """Names an expression holds as they are: `e`, `(path, e)`, `{"error": e}`, `e.__traceback__`,
    and a local name `bound` to such a display (`info = {"error": e}`, then `append(info)`)."""
    if type(expr) is cst.Name:
        shown = bound.get(expr.value, [])
        rest = {name: values for name, values in bound.items() if name != expr.value}
        return {expr.value}.union(*(_displayed_names(value, rest) for value in shown))
    if type(expr) is cst.Attribute and expr.attr.value == "__traceback__":
        return _displayed_names(expr.value, bound)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return {n for element in expr.elements for n in _displayed_names(element.value, bound)}
    if type(expr) is cst.Dict:
        return {n for e in expr.elements if type(e) is cst.DictElement for n in _displayed_names(e.value, bound)}
    return set()


def _key_parameter(store: Store, params: list[str]) -> str | None:
    """The parameter a helper's `container[key] = value` uses as its key."""
    node = store.node
    if type(node) is not cst.Assign or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if type(target) is not cst.Subscript or len(target.slice) != 1:
        return None
    index = target.slice[0].slice
    key = index.value if type(index) is cst.Index else None
    return key.value if type(key) is cst.Name and key.value in params else None


def _scratch(facts: Facts) -> Facts:
    """A Facts for summarising and for deferred walks: shares what is known (a deferred walk adds
    its final names there: summaries never write them), keeps its events to itself."""
    return Facts(
        facts.index,
        final_env=facts.final_env,
        reset_in_call=facts.reset_in_call,
        argument_values=facts.argument_values,
        deferred=facts.deferred,
        walk_later=facts.walk_later,
        bases_elsewhere=facts.bases_elsewhere,
        attribute_cache=facts.attribute_cache,
        walks_pending=facts.walks_pending,
        summaries=facts.summaries,
        path=facts.path,
        project=facts.project,
        imported_classes=facts.imported_classes,
    )


def analyze(
    module: cst.Module,
    *,
    path: Path | None = None,
    project: Project | None = None,
    only_module_body: bool = False,
    walk_units: bool = True,
) -> Facts:
    """Index the module, then walk every unit, parents first.

    A module read only for its summaries (an import of the checked file) walks its body alone:
    each function is walked when a call first asks for its summary. Without `walk_units`, the
    facts are the index alone (for rules that read no more: no module it imports is read).
    """
    star_origins = partial(project.star_bindings, path) if project is not None and path is not None else None
    index = build_index(module, keep_places=not only_module_body, star_origins=star_origins)
    facts = Facts(index, path=path, project=project, bases_elsewhere=_bases_elsewhere)
    if only_module_body:
        _Walker(facts, facts.index.module_unit).run()
        return facts
    assign_loop_step_roles(facts.index)
    if not walk_units:
        return facts
    units = facts.index.units
    facts.step_functions = _step_functions(units)
    walked = _worth_walking(units, facts)
    known = units[: len(walked)]  # units added since (a lambda's) are walked below, as the walk meets them
    # A unit that only sets attributes is walked when a reader first asks for its final names.
    facts.deferred.update((id(u), u) for u, walks in zip(known, walked, strict=True) if not walks and u.sets_attributes)
    facts.walk_later = _walk_deferred
    # Helpers of repeating code bind their parameters from their callers' names: walked after them.
    later = {id(u) for u in known if any(a.call_sites for a in _units_around(u))}
    order = [u for u in known if id(u) not in later] + _callers_first([u for u in known if id(u) in later])
    position_of = {id(unit): position for position, unit in enumerate(known)}
    facts.walks_pending.update(id(unit) for unit, walks in zip(known, walked, strict=True) if walks)
    for unit in order:
        if walked[position_of[id(unit)]]:
            _Walker(facts, unit).run()
    position = len(walked)
    while position < len(units):  # the walk adds units for lambdas it meets: they are walked too
        _Walker(facts, units[position]).run()
        position += 1
    return facts


def _wrapped_grad_mode(facts: Facts, decorator: Unit) -> bool | None:
    """The mode a decorator `def decorate(fn)` runs `fn` in: every return wraps it in a context
    manager used as a decorator (`return torch.no_grad()(fn)`), or returns a wrapper that calls it
    only inside `with` blocks that set one mode."""
    node = decorator.node
    params = decorator.params
    if type(node) is not cst.FunctionDef or not params:
        return None
    wrapped = params[0].name.value
    reader = _Walker(_scratch(facts), decorator)
    modes: set[bool | None] = set()
    for returned, _ in placed(decorator, cst.Return):
        value = returned.value
        given = value.args[0].value if type(value) is cst.Call and len(value.args) == 1 else None
        if type(value) is cst.Call and type(given) is cst.Name and given.value == wrapped:
            modes.add(reader._grad_mode(value.func))  # `return torch.inference_mode()(fn)`
        elif type(value) is cst.Name and (wrapper := decorator.defs.get(value.value)) is not None:
            modes.add(_mode_around_calls(reader, wrapper, wrapped))  # `return wrapper`
        else:
            modes.add(None)
    return modes.pop() if len(modes) == 1 else None


def _mode_around_calls(reader: _Walker, wrapper: Unit, wrapped: str) -> bool | None:
    """The one mode that the innermost `with` setting one gives every call of `wrapped` in
    `wrapper` (a `nullcontext()` around it sets none)."""
    calls = [
        call for call, _ in placed(wrapper, cst.Call) if type(call.func) is cst.Name and call.func.value == wrapped
    ]
    mode_at: dict[int, bool] = {}
    for block, _ in placed(wrapper, cst.With):  # outer blocks first: an inner one overrides them
        modes = {mode for item in block.items if (mode := reader._grad_mode(item.item)) is not None}
        if len(modes) == 1:
            mode = modes.pop()
            mode_at.update((id(n), mode) for n in walk(block.body))
    found = {mode_at.get(id(call)) for call in calls}
    return found.pop() if len(found) == 1 else None


def _walk_deferred(facts: Facts, unit: Unit) -> None:
    """Walk a unit that only sets attributes (`__init__`), for the names at its end that another
    unit asks for (`self.x = local`) and the containers it empties. Its events are dropped: no
    rule reports them (it has no role, loop, `try` or closure), and a rule may be reading the
    lists they would go to. In lightning, more than half of them are never asked for."""
    _Walker(_scratch(facts), unit).run()


def _step_functions(units: list[Unit]) -> set[int]:
    """Functions nested in a function that calls them by name in its loops (`for x in xs:
    _step(x)`): their body runs in that loop, as if written there."""
    found: set[int] = set()
    for unit in units:
        if not (unit.defs and unit.has_loop and type(unit.node) is cst.FunctionDef):
            continue
        for call, place in placed(unit, cst.Call):
            if place.loops and type(call.func) is cst.Name and (nested := unit.defs.get(call.func.value)) is not None:
                found.add(id(nested))
    return found


def _worth_walking(units: list[Unit], facts: Facts) -> list[bool]:
    """Which units the flow pass walks: those whose events a rule can report (a role, a loop or a
    comprehension over batches, a lambda or nested def, a `try`), and the units around them (a
    closure reads its parents' names). A unit that sets `self.x` is walked when its final names
    are asked for (`Facts.names_at_end`), and any function when a walked unit calls it (its summary)."""
    position_of = {id(unit): position for position, unit in enumerate(units)}
    for unit in units:  # kept for the walk, which reports what they collect
        if unit.has_comprehension and (over_data := data_comprehensions(unit, facts.imports)):
            facts.data_comprehensions[id(unit)] = over_data
    walked = [
        bool(unit.roles or unit.has_loop or unit.has_try or unit.has_nested)
        or id(unit) in facts.step_functions
        or unit.fills_attributes
        # a default container or a class-level one: what a call puts there outlives the call
        or bool(unit.mutable_defaults or (unit.is_method and unit.cls is not None and unit.cls.class_containers))
        or id(unit) in facts.data_comprehensions
        for unit in units
    ]
    # A method whose helper fills a list (`self._keep(x)`). Resolving the calls may add units
    # (a lambda's): they come after these, and the walk takes them as it meets them.
    for position, unit in enumerate(units[: len(walked)]):
        if not unit.is_method or unit.name == "__init__" or unit.roles:
            continue
        for call, callee in callees(facts.index, unit):
            if _fills_lists(facts.index, callee):
                walked[position] = True
                if callee.is_method and not callee.roles:
                    callee.call_sites.append((call, unit))  # its parameters take what the method passes
    for position in range(len(walked) - 1, 0, -1):  # children come after their parents
        parent = units[position].parent
        if walked[position] and parent is not None:
            walked[position_of[id(parent)]] = True
    return walked


def _fills_lists(index: ModuleIndex, unit: Unit, depth: int = 0) -> bool:
    """Whether a function appends to its object's lists or to a list it is handed, itself or
    through a helper it calls (`record(**kw)` calling `self._keep(key, value)`)."""
    if unit.fills_attributes:
        return True
    node = unit.node
    if type(node) is cst.FunctionDef and any(p.name.value in unit.list_evidence for p in all_params(node.params)):
        return True
    return depth < _FILLING_DEPTH and any(
        _fills_lists(index, callee, depth + 1) for _, callee in callees(index, unit) if callee is not unit
    )


_FILLING_DEPTH = 2  # helpers of helpers; further, a call says little of what it keeps


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Calls that hold or fold together every element a generator gives them.
_GATHERING = frozenset(["sum", "list", "tuple", "sorted", "stack", "cat", "concat", "concatenate", "hstack", "vstack"])


def _gathered(generator: cst.GeneratorExp, statement: cst.BaseSmallStatement) -> bool:
    """`sum(loss(b) for b in batches)`, `torch.cat(list(...))`: the generator's elements are all kept."""
    return any(
        type(node) is cst.Call and callee_name(node) in _GATHERING and any(arg.value is generator for arg in node.args)
        for node in walk(statement)
    )


def _callers_first(units: list[Unit]) -> list[Unit]:
    """The units in source order, except that a caller among them comes before the helpers it
    calls: `_train_iter` before the `_update_stats` it calls, defined above it."""
    among = {id(u) for u in units}
    ordered: list[Unit] = []
    placed_ids: set[int] = set()

    def place(unit: Unit) -> None:
        if id(unit) in placed_ids:
            return
        placed_ids.add(id(unit))  # before the callers: a cycle of calls keeps source order
        for around in _units_around(unit):
            for _, caller in around.call_sites:
                if id(caller) in among:
                    place(caller)
        ordered.append(unit)

    for unit in units:
        place(unit)
    return ordered


def data_comprehensions(unit: Unit, imports: Imports) -> set[int]:
    """The ids of the unit's comprehensions that iterate a loader's batches."""
    return {
        id(comprehension)
        for kind in _COMPREHENSIONS
        for comprehension, _ in placed(unit, kind)
        if iterates_data(comprehension.for_in.iter, unit, imports, comprehension.for_in.target)
    }


def _names_a_reward(target: cst.BaseExpression) -> bool:
    return type(target) is cst.Name and bool({"reward", "rewards"} & set(target.value.lower().split("_")))


def _rewards_beside_a_loss(target: cst.Tuple | cst.List, value: cst.BaseExpression) -> bool:
    """`loss, chosen_rewards, rejected_rewards = loss_fn(policy_logps, ...)`: rewards unpacked
    beside a loss, from a call that neither is nor is handed a network (a reward model's own
    scores, `pairwise_loss(reward_model, batch)`, keep its graph)."""
    names = [e.value for e in target.elements]
    if not (
        any(_names_a_reward(n) for n in names) and any(type(n) is cst.Name and is_loss_name(n.value) for n in names)
    ):
        return False
    return not any(type(n) is cst.Name and is_model_name(n.value) for n in [value, *walk(value)])


def _names_an_accuracy(target: cst.BaseExpression) -> bool:
    """`acc`, `top1_acc`, `wacc`, `acc5`, `accuracy`, `n_correct`: counted from comparisons, no graph."""
    if type(target) is not cst.Name:
        return False
    lowered = target.value.lower().rstrip("0123456789")
    return lowered.endswith(("acc", "accuracy", "correct")) or lowered.startswith("acc_")


def _names_a_count(target: cst.BaseExpression) -> bool:
    return type(target) is cst.Name and names_a_count(target.value)


def _names_a_log(target: cst.BaseExpression) -> bool:
    return type(target) is cst.Name and names_a_log(target.value)
