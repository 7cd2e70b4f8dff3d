"""Recurrent state: a value that training code feeds back, every batch, into the call that made it.

`out, hidden = model(x, hidden)` in a loop that calls `backward()` carries `hidden` from one
iteration into the next, and with it the autograd graph of every earlier batch, unless the
iteration cuts it: `hidden = hidden.detach()`, `repackage_hidden(hidden)`, `hidden.detach_()`, or
a fresh start (`hidden = model.init_hidden(bs)`). `self.hidden` carried across the calls of
a per-step method (`training_step`) is the same. TL010 reports such states; TL011 leaves the
`backward(retain_graph=True)` of such a loop to TL010.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

from tensorlint.analysis.facts import Facts, flowing_into
from tensorlint.analysis.index import (
    NO_GRAD_STEP_METHODS,
    TRAINING_STEPS,
    Place,
    Role,
    Unit,
    placed,
    resolve_callable,
    self_attribute,
)
from tensorlint.analysis.names import callee_name, dotted_name, receiver, references
from tensorlint.analysis.syntax import (
    NoGrad,
    calls_under_no_grad,
    decorated_no_grad,
    is_training_iteration,
    iterates_loader,
    loop_calls,
    own_nodes,
    target_names,
)
from tensorlint.analysis.values import is_model_name

# The calls that backpropagate a loss: `loss.backward()`, Lightning's and Accelerate's.
BACKWARD_CALLS = frozenset(["backward", "manual_backward"])
_CUT_WORDS = ("detach", "repackage")
# Names of recurrent networks and their cells: `self.lstm`, `encoder_rnn`, `gru_cell`.
_RECURRENT_WORDS = ("rnn", "lstm", "gru", "cell")  # `repackage_hidden`, `detach_hidden`, `hidden.detach_()`


def retain_graph_flag(call: cst.Call) -> cst.Arg | None:
    """A backward call's `retain_graph=True`, spelled as the literal (a variable may be False)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "retain_graph":
            return arg if type(arg.value) is cst.Name and arg.value.value == "True" else None
    return None


@dataclass(frozen=True, eq=False)
class CarriedState:
    """`names`, assigned by `node` from their own previous value, carried across `loop`'s iterations
    (None: across the calls of the per-step method `node` is in) into the loss of `backwards`."""

    node: cst.Assign
    names: tuple[str, ...]
    loop: cst.For | cst.While | None
    backwards: tuple[cst.Call, ...]  # the backward calls of a loss computed from it


def carried_states(facts: Facts, unit: Unit) -> list[CarriedState]:
    """States the unit feeds back into the call that computes them, across the iterations of a loop
    that calls `backward()` (or the calls of a training step), and never detaches or starts afresh."""
    # A loop carries state from one iteration into the next, a step method from one call into the
    # next: a framework's (`training_step`), or one that calls `backward()` (a loop may call it).
    step = Role.STEP in unit.roles or (unit.is_method and any(_is_backward(c) for c, _ in placed(unit, cst.Call)))
    if not (unit.has_loop or step) or decorated_no_grad(unit):
        return []
    no_grad = NoGrad(unit)
    loops: list[tuple[cst.For | cst.While, Place]] = [*placed(unit, cst.For), *placed(unit, cst.While)]
    loops.sort(key=lambda item: -len(item[1].loops))  # innermost first: one state, one loop
    found: list[CarriedState] = []
    seen: set[int] = set()
    for loop, place in loops:
        backwards = tuple(
            call for call in loop_calls(unit, loop) if _is_backward(call) and id(call) not in no_grad.nodes
        )
        over_batches = is_training_iteration(loop, unit, facts.imports)
        if id(loop) in no_grad.nodes or not (backwards or _evaluates_a_stream(facts, unit, loop)):
            continue
        # `for epoch ...: h = None; for snapshot in data: ...; cost.backward()`: one backward per
        # outer iteration spans the whole inner loop, by design (backpropagation through it all).
        backpropagated_after = not backwards and any(
            _is_backward(call) and id(call) not in no_grad.nodes
            for outer in place.loops
            for call in loop_calls(unit, outer)
        )
        fresh = target_names(loop.target) if type(loop) is cst.For else set()
        for state in _states(facts, unit, loop.body, fresh, backwards, loop):
            if id(state.node) in seen or id(state.node) in no_grad.nodes:
                continue
            if (not over_batches or backpropagated_after) and _started_outside(facts, unit, loop, state.names):
                continue  # the time steps of one batch, which starts the state afresh: one graph should span them
            seen.add(id(state.node))
            found.append(state)
    if step:
        found.extend(_step_states(facts, unit, no_grad))
    return found


def _states(
    facts: Facts,
    unit: Unit,
    body: cst.CSTNode,
    fresh: set[str],
    backwards: tuple[cst.Call, ...],
    loop: cst.For | cst.While | None,
    returned: Iterable[cst.BaseExpression] = (),
) -> Iterator[CarriedState]:
    """The assignments in `body` that pass a name's value from the previous run of `body` to a model
    (`model(x, hidden)`, `self.lstm(x, (h, c))`) and bind the name to what it returns, where the loss
    that `backwards` take (or the step returns) is computed from it and nothing in `body` cuts it."""
    assigns: list[cst.Assign] = []
    guarded = _guarded(body)
    origins: dict[str, set[str]] = {name: set() for name in fresh}  # name -> earlier runs' names it holds
    candidates: list[tuple[cst.Assign, set[str]]] = []
    restarted: set[str] = set()  # detached, or assigned afresh
    for node in own_nodes(body):
        if isinstance(node, (cst.For, cst.CompFor)):
            origins.update((name, set()) for name in target_names(node.target))  # an inner loop's variables
        elif type(node) is cst.WithItem and node.asname is not None:
            origins.update((name, set()) for name in target_names(node.asname.name))
        if type(node) is cst.AnnAssign and node.value is not None:
            # `out: GeneratorOutput = await self.generate(batch)`: started afresh, as by `=`
            if not _cuts(facts, unit, node.value) and references(node.value) & set(target_names(node.target)):
                continue
            for name in target_names(node.target):
                if id(node) not in guarded.get(name, set()):
                    restarted.add(name)
                origins[name] = set()
            continue
        if type(node) is not cst.Assign:
            continue
        assigns.append(node)
        targets = {name for target in node.targets for name in target_names(target.target)}
        cut = _cuts(facts, unit, node.value)
        held = set() if cut else {old for name in references(node.value) for old in origins.get(name, {name})}
        if not cut and (carried := targets & _fed_to_model(facts, unit, node.value, origins)):
            candidates.append((node, carried))
        for name in targets:
            if cut or (name not in held and id(node) not in guarded.get(name, set())):
                restarted.add(name)
            origins[name] = held
    if not candidates:
        return
    restarted |= _detached_by_calls(facts, unit, body, {name for _, names in candidates for name in names})
    seeds = {name for call in backwards for name in _backpropagated(call)}
    seeds |= {name for value in returned for name in references(value)}
    reaching = _reaching(assigns, seeds)
    for assign, names in candidates:
        written = {name for target in assign.targets for name in target_names(target.target)}
        kept = _in_source_order(assign, names - restarted)
        if kept and (written & reaching or not (backwards or returned)):  # no backward: the state's own graph grows
            yield CarriedState(assign, kept, loop, backwards)


def _evaluates_a_stream(facts: Facts, unit: Unit, loop: cst.For | cst.While) -> bool:
    """A loop without `backward()` over a loader's batches (not `range(num_batches)`: tiles,
    chunks), with gradients on as far as the file shows: an evaluation over a stream, whose
    carried state drags a graph that nothing frees. Decoding time steps end with the call."""
    if type(loop) is not cst.For or (type(loop.iter) is cst.Call and callee_name(loop.iter) == "range"):
        return False
    return iterates_loader(loop, unit, facts.imports) and not _called_under_no_grad(facts, unit)


def _called_under_no_grad(facts: Facts, function: Unit) -> bool:
    """Whether some call of the function in the file runs under `no_grad` (`with torch.no_grad():
    evaluate(model, loader)`, or from a function decorated with it)."""
    return any(calls_under_no_grad(facts.index, function.name))


def _started_outside(facts: Facts, unit: Unit, loop: cst.For | cst.While, names: tuple[str, ...]) -> bool:
    """Whether the unit starts the state afresh outside the loop: `h = model.init_hidden(bs)` before a
    loop over time steps (in the function, or in a loop around it)."""
    inside = {id(node) for node in own_nodes(loop)}
    for node in own_nodes(unit.node):
        if type(node) is cst.Assign and id(node) not in inside:
            written = {name for target in node.targets for name in target_names(target.target)}
            reads = references(node.value)
            if any(name in written and (name not in reads or _cuts(facts, unit, node.value)) for name in names):
                return True
    return False


def _in_source_order(assign: cst.Assign, names: set[str]) -> tuple[str, ...]:
    """`names` in the order the assignment's targets spell them: `(h, c)`, not sorted."""
    ordered: list[str] = []
    for target in assign.targets:
        for node in [target.target, *own_nodes(target.target)]:
            name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
            if name in names and name not in ordered:
                ordered.append(name)
    return tuple(ordered)


def _guarded(body: cst.CSTNode) -> dict[str, set[int]]:
    """Name -> the nodes under an `if` that tests it: `if hidden is None: hidden = init()` starts
    the state once, not every time."""
    guarded: dict[str, set[int]] = {}
    for node in own_nodes(body):
        if type(node) is cst.If:
            for name in references(node.test):
                guarded.setdefault(name, set()).update(id(inner) for inner in own_nodes(node.body))
    return guarded


def _detached_by_calls(facts: Facts, unit: Unit, body: cst.CSTNode, names: set[str]) -> set[str]:
    """Which of `names` a call in `body` detaches in place: `hidden.detach_()`, `repackage(hidden)`,
    `self.detach_hidden()` (a call on the owner without arguments cuts the owner's state)."""
    detached: set[str] = set()
    for node in own_nodes(body):
        if type(node) is cst.Call and _cutting_call(facts, unit, node, 0):
            detached |= names & references(node)
            owner = receiver(node)
            if owner is not None and not node.args:
                prefix = (dotted_name(owner) or "") + "."
                detached |= {name for name in names if name.startswith(prefix)}
    return detached


def _cuts(facts: Facts, unit: Unit, value: cst.BaseExpression) -> bool:
    """Whether a value drops the graph of what it reads: `.detach()`, `.data`, `repackage_hidden(h)`."""
    for node in [value, *own_nodes(value)]:
        if type(node) is cst.Attribute and node.attr.value == "data":
            return True
        if type(node) is cst.Call and _cutting_call(facts, unit, node, 0):
            return True
    return False


def _cutting_call(facts: Facts, unit: Unit, call: cst.Call, depth: int) -> bool:
    """`x.detach()`, `detach_(x)`, `repackage_hidden(h)`, or a function of this module that does one."""
    name = (callee_name(call) or "").lower()
    if any(word in name for word in _CUT_WORDS):
        return True
    if depth > 1:
        return False
    for helper in _helpers(facts, unit, call):
        for node in own_nodes(helper.node):
            if type(node) is cst.Attribute and node.attr.value == "data":
                return True
            if type(node) is cst.Call and _cutting_call(facts, helper, node, depth + 1):
                return True
    return False


def _helpers(facts: Facts, unit: Unit, call: cst.Call) -> list[Unit]:
    """The functions and methods of this module that a call runs: `f(h)`, `self.f(h)`."""
    return [found for found, _, _ in resolve_callable(facts.index, call.func, unit)]


def _step_states(facts: Facts, unit: Unit, no_grad: NoGrad) -> list[CarriedState]:
    """`self.hidden` fed back into the call that computes it in each call of a training step, where
    no other method of the class (nor code outside it) resets or detaches it."""
    method = unit.method_unit()
    if method is not unit or unit.name in NO_GRAD_STEP_METHODS or unit.cls is None:
        return []
    if Role.STEP not in unit.roles and not _called_per_batch_on_self(facts, unit):
        return []
    backwards = tuple(
        call for call, _ in placed(unit, cst.Call) if _is_backward(call) and id(call) not in no_grad.nodes
    )
    returned: list[cst.BaseExpression] = []
    if unit.name in TRAINING_STEPS:
        returned = [node.value for node, _ in placed(unit, cst.Return) if node.value is not None]
    if not backwards and not returned:
        return []
    prefix = f"{unit.self_name}."
    states = []
    for state in _states(facts, unit, unit.node, set(), backwards, None, returned):
        names = tuple(
            name for name in state.names if name.startswith(prefix) and not _reset_elsewhere(facts, unit, name)
        )
        if names and id(state.node) not in no_grad.nodes:
            states.append(CarriedState(state.node, names, None, backwards))
    return states


def _called_per_batch_on_self(facts: Facts, method: Unit) -> bool:
    """`self.step(x, y)` in a loop over batches in another method of the class (`fit`): the
    method runs once per batch, as a framework's `training_step` does."""
    assert method.cls is not None
    for other in facts.index.method_units.values():
        if other.cls is not method.cls or other is method or not other.has_loop:
            continue
        for call, place in placed(other, cst.Call):
            func = call.func
            if (
                type(func) is cst.Attribute
                and func.attr.value == method.name
                and type(func.value) is cst.Name
                and func.value.value == other.self_name
                and any(is_training_iteration(loop, other, facts.imports) for loop in place.loops)
            ):
                return True
    return False


def _reset_elsewhere(facts: Facts, unit: Unit, name: str) -> bool:
    """`self.hidden = None` in `on_train_batch_start`, `model.hidden = model.init_hidden()` in the loop."""
    attribute = name.split(".", 1)[1]
    assert unit.cls is not None
    if attribute in facts.index.foreign_attributes:
        return True
    return any(
        other is not unit and other.name != "__init__" for _, other in unit.cls.attribute_values.get(attribute, [])
    )


def _backpropagated(call: cst.Call) -> set[str]:
    """The names of the loss a backward call takes: `loss.backward()`, `accelerator.backward(loss)`."""
    owner = receiver(call)
    if callee_name(call) == "backward" and owner is not None and not call.args:
        return references(owner)
    names = {name for arg in call.args if arg.keyword is None for name in references(arg.value)}
    return names | (references(owner) if owner is not None else set())


def _reaching(assigns: list[cst.Assign], seeds: set[str]) -> set[str]:
    """`seeds` and the names whose values flow into them through `assigns`."""
    flows = [({n for t in a.targets for n in target_names(t.target)}, references(a.value)) for a in assigns]
    return flowing_into(flows, seeds)


def _fed_to_model(facts: Facts, unit: Unit, value: cst.BaseExpression, origins: dict[str, set[str]]) -> set[str]:
    """The earlier runs' names whose values `value` passes as arguments to a module call."""
    held: set[str] = set()
    for node in [value, *own_nodes(value)]:
        if type(node) is cst.Call and _calls_module(facts, unit, node):
            for arg in node.args:
                held |= {old for name in references(arg.value) for old in origins.get(name, {name})}
    return held


def _calls_module(facts: Facts, unit: Unit, call: cst.Call) -> bool:
    """`model(x, h)`, `self.rnn(x, h)`, `model.lstm(x, h)`, `agent.get_states(x, h)`: a call of a
    network or of one of its methods, by what the analysis knows of the names or by their names."""
    if type(call.func) is cst.Attribute and call.func.attr.value in _MOVES_DATA:
        return False  # `model.to_device(x)`: the argument moved, not a computation of the network
    scopes = []  # the unit and the functions and module around it: where a model may be bound
    around: Unit | None = unit
    while around is not None:
        scopes.append((facts.names_at_end(around) or {}, around.module_evidence))
        around = around.parent
    expr: cst.BaseExpression = call.func
    while isinstance(expr, (cst.Attribute, cst.Name)):
        chain = dotted_name(expr) or ""
        attribute = self_attribute(unit, expr)
        last = chain.rsplit(".", 1)[-1]
        if any((chain in env and env[chain].module) or chain in evidence for env, evidence in scopes):
            return True
        if attribute is not None and unit.cls is not None and attribute in unit.cls.module_attributes:
            return True
        if is_model_name(last) or any(word in last.lower() for word in _RECURRENT_WORDS):
            return True
        if type(expr) is not cst.Attribute:
            break
        expr = expr.value
    return False


# Methods that move or cast what they are given (a model's `to_device(batch)` too): no computation.
_MOVES_DATA = frozenset(["to", "cuda", "cpu", "to_device", "move_to_device", "to_cuda", "to_gpu", "half", "float",
                         "double", "bfloat16", "type", "pin_memory"])  # fmt: skip


def _is_backward(call: cst.Call) -> bool:
    return callee_name(call) in BACKWARD_CALLS
