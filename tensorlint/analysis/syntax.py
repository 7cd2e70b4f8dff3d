"""Syntactic facts read straight from a unit's statements, without following values.

The flow pass follows values; some rules only need where a statement sits (inside which loops,
which `except` handlers) and what a loop's body calls, and the flow pass itself asks which names
a loop carries or resets and which names a closure reads. These helpers walk one unit's own code
(never the bodies of nested functions, lambdas or classes) and answer that.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

import libcst as cst

from tensorlint.analysis.index import (
    LIGHTNING_STEPS,
    MODULE_HOOK_REGISTRATIONS,
    NO_GRAD_STEP_METHODS,
    STEP_METHODS,
    TENSOR_HOOK_REGISTRATIONS,
    TRAINING_STEPS,
    ClassInfo,
    ModuleIndex,
    Node,
    Place,
    Role,
    Unit,
    all_params,
    annotated_class,
    arguments_by_position,
    called_from,
    first_iteration_calls,
    hand_on_containers,
    is_step_method,
    lineage,
    member_methods,
    method_of,
    placed,
    qualified_name,
    run_once_calls,
    runs_per_batch,
    self_attribute,
    sibling_methods,
    single_class,
    spread_repeating_roles,
    steps_once,
)
from tensorlint.analysis.names import (
    Imports,
    callee_name,
    dotted_name,
    grad_mode_of,
    names_in,
    receiver,
    references,
    steps_an_optimizer,
    string_value,
)
from tensorlint.analysis.values import is_model_name, names_a_loss_value, names_integer_field, text_key
from tensorlint.analysis.walk import LEAVES, children, contains, same_code, walk


def own_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node below `node`, not entering nested functions, lambdas or classes."""
    return walk(node, into_functions=False)


def mentions(expr: cst.BaseExpression, dotted: str) -> bool:
    """Whether `expr` reads the name or attribute chain `dotted`: `len(self.handles)` reads `self.handles`."""
    return any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == dotted for node in [expr, *own_nodes(expr)]
    )


def removes_handles(scope: cst.CSTNode, container: str) -> bool:
    """`for h in self.handles: h.remove()` (or a comprehension that does it) in the function."""
    for node in own_nodes(scope):
        if type(node) is cst.For:
            iterated = [node.iter]
        elif isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            iterated = [inner.iter for inner in own_nodes(node) if type(inner) is cst.CompFor]
        else:
            continue
        if any(mentions(expr, container) for expr in iterated) and any(
            type(inner) is cst.Call and callee_name(inner) == "remove" and not inner.args for inner in own_nodes(node)
        ):
            return True
    return False


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    return [inner for inner in own_nodes(node) if type(inner) is cst.Call]


def loop_calls(unit: Unit, loop: cst.For | cst.While) -> list[cst.Call]:
    """`calls_in(loop.body)` for a loop of the unit's own code, read from its placed calls: asked of
    every loop, often more than once, and a walk of the body costs more."""
    return _placed_in_loop(unit, loop, cst.Call, calls_in)


def _loop_assignments(unit: Unit, loop: cst.For | cst.While) -> list[cst.Assign]:
    """The assignments in a loop's body, read as `loop_calls` reads its calls."""
    return _placed_in_loop(unit, loop, cst.Assign, lambda body: [n for n in own_nodes(body) if type(n) is cst.Assign])


def _placed_in_loop(
    unit: Unit, loop: cst.For | cst.While, kind: type[Node], walk_body: Callable[[cst.BaseSuite], list[Node]]
) -> list[Node]:
    if not any(node is loop for node, _ in placed(unit, type(loop))):
        return walk_body(loop.body)  # a loop of another unit's code (the function around a closure)
    return [node for node, place in placed(unit, kind) if any(outer is loop for outer in place.loops)]


def iterates_loader(loop: cst.For | cst.While, unit: Unit, imports: Imports) -> bool:
    """`for batch in loader`, `enumerate(tqdm(train_dataloader))`: a loop over a DataLoader's batches."""
    return type(loop) is cst.For and iterates_data(loop.iter, unit, imports, loop.target)


def iterates_data(
    iterable: cst.BaseExpression, unit: Unit, imports: Imports, target: cst.BaseExpression | None = None
) -> bool:
    """Whether iterating this expression goes over a loader's batches (a loop's or a comprehension's,
    whose `target` may say so: `for batch in range(len(adj))` counts batches)."""
    return counts_batches(iterable, target) or _iterates_data(iterable, unit, imports, 2)


def counts_batches(iterable: cst.BaseExpression, target: cst.BaseExpression | None) -> bool:
    """`for batch in range(len(adj["val"]))`, `for batch_idx in range(n)`: batch indices (not
    `batch_size`, a count)."""
    if type(target) is not cst.Name or type(iterable) is not cst.Call or dotted_name(iterable.func) != "range":
        return False
    words = target.value.lower().split("_")
    return any(word in ("batch", "ibatch", "batchidx") for word in words) and words[-1] not in ("size", "sizes")


def batch_starts(iterable: cst.BaseExpression) -> bool:
    """`range(0, len(X), batch_size)`: where each batch starts, in data batched by hand."""
    if type(iterable) is not cst.Call or dotted_name(iterable.func) != "range":
        return False
    args = [arg.value for arg in iterable.args if arg.keyword is None]
    step = dotted_name(args[2]) if len(args) == 3 else None
    return step is not None and bool(set(step.rsplit(".", 1)[-1].lower().split("_")) & _BATCH_SIZE_WORDS)


_BATCH_SIZE_WORDS = frozenset(["batch", "bs", "bsz", "batchsize", "minibatch"])


def _iterates_data(iterable: cst.BaseExpression, unit: Unit, imports: Imports, depth: int) -> bool:
    """Whether an iterable reads a loader, directly or through names bound to one a few steps
    away (`pbar = tqdm(test_loader)` then `for x, y in pbar`). Not a mapping's entries
    (`for name, data in dict_data.items()`): the fields or names of one object, unless the
    mapping is named for batches or loaders (`batches_by_doc.items()`)."""
    if type(iterable) is cst.Call and callee_name(iterable) in ("items", "keys") and not iterable.args:
        mapping = receiver(iterable)
        last = ((dotted_name(mapping) if mapping is not None else None) or "").rsplit(".", 1)[-1].lower()
        if not any(word in last for word in ("batch", "loader", "iter")):
            return False
    calls = [n for n in [iterable, *walk(iterable)] if type(n) is cst.Call]
    called = {dotted_name(n.func) for n in calls}
    # `range(args.itr)`, `range(num_iters)`: a count of iterations (of runs, perhaps), not an iterator
    # named `itr`; `range(n_batches)` counts batches, and `range(len(loader))` reads the loader
    counts = {
        name
        for n in calls
        if dotted_name(n.func) == "range"
        for a in n.args
        if (name := dotted_name(a.value)) is not None and "batch" not in name.lower()
    }
    for name in references(iterable) - called - counts:  # what is iterated, not the functions called on it
        network = unit.cls is not None and unit.cls.is_module
        if (
            _names_data(name)
            and not (network and pieces_made_here(name, unit, imports, depth))
            and not ("." not in name and few_pieces(name, unit))
        ):
            return True  # train_loader, test_iter, valid_itr (fairseq), val_batches, dataset, val_data, train_dl
        if "." in name:
            continue
        if any(_is_loader_call(imports, v) for v in unit.lookup_bindings(name)):
            return True
        # the function's own names only: a parameter shadows the module's name
        if depth > 0 and any(_wraps_data(v, unit, imports, depth - 1) for v in unit.bindings.get(name, [])):
            return True
    return False


def _reads_given(node: cst.CSTNode, given: set[str]) -> bool:
    """Whether an expression reads a parameter or the object's state (`samples`, `self.dataset`)."""
    return any(type(n) is cst.Name and n.value in given for n in [node, *walk(node)])


def _indexes_given(node: cst.CSTNode, given: set[str]) -> bool:
    """`samples[i]`, `self.dataset[idx]`: an item of a parameter or of the object's state."""
    return any(
        type(n) is cst.Subscript
        and _reads_given(n.value, given)
        and any(type(element.slice) is cst.Index for element in n.slice)
        for n in walk(node)
    )


def _a_range(iterable: cst.BaseExpression) -> bool:
    """`range(0, ids.size(0), chunk)`: positions, not the items of what it reads."""
    return type(iterable) is cst.Call and dotted_name(iterable.func) == "range"


def pieces_made_here(name: str, unit: Unit, imports: Imports, depth: int = 2) -> bool:
    """A list that a function makes and fills itself, from no data (`batches = []`, then
    `batches.append(t)` in a loop over the chunks it cut from its input). In a network's own
    method (the caller knows), its items are pieces of one input, and a loop over them computes
    one output, whatever the list is named. A list filled in a loop over data (`for x in loader`,
    `range(0, n, batch_size)`, `next(it)`) or over what the function was given (a parameter, the
    object's state: `for s in samples`, `X.split(batch_size)`), or extended by it, holds data."""
    if depth <= 0:
        return False
    values = unit.bindings.get(name)
    if not values or not all(type(v) is cst.List for v in values):
        return False
    fills: list[tuple[cst.CSTNode, Place]] = [
        (call, place)
        for call, place in placed(unit, cst.Call)
        if type(call.func) is cst.Attribute and type(call.func.value) is cst.Name and call.func.value.value == name
    ]
    fills += [(node, place) for node, place in placed(unit, cst.AugAssign) if dotted_name(node.target) == name]
    given = {p.name.value for p in unit.params} | ({unit.self_name} if unit.self_name else set())
    for fill, place in fills:  # `batches.append(t)`, `batches += [t]`
        if any(fetches_next(inner) for inner in calls_in(fill)):
            return False
        extended = (
            fill.args[0].value if type(fill) is cst.Call and callee_name(fill) == "extend" and fill.args else None
        )
        if extended is not None and type(extended) not in (cst.List, cst.Tuple) and _reads_given(extended, given):
            return False  # `batches.extend(loader)`: the items of what the function was given
        if _indexes_given(fill, given):
            return False  # `batches.append(self.dataset[i])`: an item of it (a slice `ids[a:b]` is a piece)
        for loop in place.loops:
            if type(loop) is cst.For and (
                batch_starts(loop.iter)
                or counts_batches(loop.iter, loop.target)
                or _iterates_data(loop.iter, unit, imports, depth - 1)
                or (not _a_range(loop.iter) and _reads_given(loop.iter, given))
            ):
                return False  # over data, or over what the function was given (`for s in samples`)
            if any(fetches_next(inner) for inner in loop_calls(unit, loop)):
                return False
    return True


def few_pieces(name: str, unit: Unit) -> bool:
    """A list that the function makes from a literal and fills a fixed number of times, each fill
    in no loop of its own (`batch_list = []` in an iteration over batches, then
    `batch_list.append(batch_label)` and, on a branch, `batch_list.append(batch_nolabel)`): a loop
    over it goes over a few pieces of one iteration, whatever they are named, not over data. A
    list handed to a call (which may fill it) or bound to anything but a literal is not known."""
    made: set[tuple[cst.For | cst.While, ...]] = set()
    for assign, place in placed(unit, cst.Assign):
        for target in assign.targets:
            if name not in target_names(target.target):
                continue
            if not _binds_a_literal(target.target, assign.value, name):
                return False
            made.add(place.loops)
    if len(made) != 1 or any(name in target_names(node.target) for node, _ in placed(unit, cst.AnnAssign)):
        return False  # made at several depths, or bound to what is not known
    if any(name in target_names(loop.target) for loop, _ in placed(unit, cst.For)):
        return False
    (loops,) = made
    for node, place in placed(unit, cst.AugAssign):
        if dotted_name(node.target) == name and (place.loops != loops or not _adds_a_literal(node)):
            return False  # `pieces += more`, or filled in a loop of its own
    for call, place in placed(unit, cst.Call):
        handed = any(type(arg.value) is cst.Name and arg.value.value == name for arg in call.args)
        if handed and callee_name(call) not in _READERS:
            return False  # `fill(batches)`: what the callee puts there is not known
        owner = receiver(call)
        if type(owner) is cst.Name and owner.value == name and callee_name(call) in ("append", "insert", "extend"):
            extended = call.args[0].value if callee_name(call) == "extend" and call.args else None
            if place.loops != loops or (extended is not None and type(extended) not in (cst.List, cst.Tuple)):
                return False  # filled in a loop of its own, or by what another iterable holds
    return True


# Calls that read the items of what they are given and put none there: `zip(batch_list, sizes)`.
_READERS = frozenset(
    ["zip", "enumerate", "len", "reversed", "sorted", "list", "tuple", "iter", "sum", "max", "min", "any", "all",
     "print", "cat", "stack", "concat", "concatenate"]
)  # fmt: skip


def _binds_a_literal(target: cst.BaseExpression, value: cst.BaseExpression, name: str) -> bool:
    """Whether `target = value` binds `name` to a list or tuple literal (`a, b = [], []` pairwise)."""
    if type(target) is cst.Name:
        return type(value) in (cst.List, cst.Tuple)
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements):
            return False
        return all(
            _binds_a_literal(element.value, given.value, name)
            for element, given in zip(target.elements, value.elements, strict=True)
            if name in target_names(element.value)
        )
    return False


def _adds_a_literal(node: cst.AugAssign) -> bool:
    """`pieces += [x]`: a fixed number of items."""
    return type(node.operator) is cst.AddAssign and type(node.value) in (cst.List, cst.Tuple)


def _wraps_data(value: cst.BaseExpression, unit: Unit, imports: Imports, depth: int) -> bool:
    """Whether a bound value is data or an iterator over it: a name for data, or a call that wraps
    one given first (`tqdm(loader, desc=...)`, `enumerate(iter(loader))`); not a call that
    merely takes a dataset by keyword (`Normalizer(dataset=train_dataset)`)."""
    if type(value) is cst.Call:
        wrapper = (callee_name(value) or "").lower()
        if wrapper not in _ITERATOR_WRAPPERS and "prefetch" not in wrapper:
            return False  # `get_transformers(train_dataset)` builds something from the data
        args = [a.value for a in value.args if a.keyword is None and not a.star]
        return bool(args) and _wraps_data(args[0], unit, imports, depth)
    if isinstance(value, (cst.Name, cst.Attribute)):
        return _iterates_data(value, unit, imports, depth)
    return False


# Calls that iterate what they are given first, item for item: progress bars, counters, prefetchers.
_ITERATOR_WRAPPERS = frozenset(["tqdm", "enumerate", "iter", "zip", "islice", "cycle", "chain", "track"])


def _names_data(name: str) -> bool:
    last = name.rsplit(".", 1)[-1].lower()
    words = set(last.split("_"))
    if "loader" in last or words & {"iter", "itr", "iterator", "batches", "dataset", "data", "dl"}:
        return True
    # a split's examples: val_set, test_ds, trainset
    split = next((w for w in _SPLITS if last.startswith(w)), None)
    return split is not None and (bool(words & {"set", "ds"}) or last in (split + "set", split + "ds"))


_SPLITS = ("train", "val", "valid", "validation", "test", "eval", "dev")


def hands_over_data(call: cst.Call, made_here: Collection[str] = ()) -> bool:
    """A call of a function given a loader or an iterator of batches, by its name:
    `train_epoch(model, train_iter)` in a loop over epochs (not `len(dataset)`, nor `loss(data)`
    for a `data` that the loop's body itself makes: a batch, not a loader)."""
    if type(call.func) is not cst.Name or call.func.value in _BUILTIN_CALLS:
        return False
    return any(
        isinstance(arg.value, (cst.Name, cst.Attribute))
        and _names_data(dotted_name(arg.value) or "")
        and (dotted_name(arg.value) or "").split(".")[0] not in made_here
        for arg in call.args
    )


_BUILTIN_CALLS = frozenset(["len", "iter", "next", "enumerate", "zip", "range", "list", "tuple", "sorted", "print",
                            "isinstance", "getattr", "hasattr", "min", "max", "sum", "str", "repr", "type"])  # fmt: skip


def is_training_iteration(loop: cst.For | cst.While, unit: Unit, imports: Imports) -> bool:
    """A loop whose every iteration is one step of training or evaluation over data: it iterates
    a DataLoader, fetches with `next()`, steps an optimizer in its body, or calls a function of the
    file that is one training step (`_step(batch)`, which calls `backward()` once)."""
    if iterates_loader(loop, unit, imports) or iterates_examples(loop, unit):
        return True
    for call in loop_calls(unit, loop):
        if type(call.func) is cst.Name and fetches_next(call):
            return True
        step = unit.lookup_def(call.func.value) if type(call.func) is cst.Name else None
        if step is not None and step is not unit and steps_once(step):
            return True
        if steps_an_optimizer(call):
            return True  # optimizer.step(), scaler.step(optimizer)
    return any(steps_an_environment(node.value) for node in _loop_assignments(unit, loop))


def fetches_next(call: cst.Call) -> bool:
    """`next(it)`, `next(loader_iter)`: the next item of an iterator; not `next(layer.parameters())`
    or `next(iter(model.buffers()))`, a network's first tensor (for its device or dtype), nor a
    search for the first item that matches (`next((k for k in keys if k in name), None)`,
    `next(filter(match, keys), None)`)."""
    if callee_name(call) != "next":
        return False
    given = call.args[0].value if call.args else None
    if type(given) is cst.GeneratorExp:
        return False
    if type(given) is cst.Call and callee_name(given) == "iter" and given.args:
        given = given.args[0].value
    return not (type(given) is cst.Call and callee_name(given) in _SEARCHED_OR_NETWORK)


# `next()` of these gives a network's first tensor or module, or the first match of a search
_SEARCHED_OR_NETWORK = frozenset(
    ["parameters", "buffers", "named_parameters", "named_buffers", "children", "modules", "filter"]
)


def step_loop(node: cst.CSTNode, place: Place, unit: Unit, imports: Imports) -> cst.For | cst.While | None:
    """The loop around `node` (at `place`) whose every iteration is one step over data and that runs
    `node` on each: not an epoch loop around such a loop (it runs a whole loop of steps per
    iteration), nor a loop that the block holding `node` leaves (`if stop: load(best); break`)."""
    loops = [loop for loop in place.loops if id(loop) not in _left_after(node, unit)]
    for position, loop in enumerate(loops):
        if not runs_steps(loop, unit, imports):
            continue
        inner = loops[position + 1 :]
        if any(runs_steps(i, unit, imports) for i in inner):
            continue  # an epoch loop around the loop that holds the node: that one is the step
        nested = [n for n in own_nodes(loop.body) if isinstance(n, (cst.For, cst.While)) and n not in inner]
        if any(runs_steps(n, unit, imports) for n in nested):
            return None  # the loop runs a whole loop of steps per iteration: once per epoch
        return loop
    return None


def runs_steps(loop: cst.For | cst.While, unit: Unit, imports: Imports) -> bool:
    """A loop whose every iteration is a step: a training iteration, or one that calls `backward()`
    (a loop fed from a queue, stepping a wrapped optimizer: `optimizer.step(model)`)."""
    if is_training_iteration(loop, unit, imports):
        return True
    return any(callee_name(c) == "backward" and type(c.func) is cst.Attribute for c in calls_in(loop.body))


def through_data(target: cst.BaseExpression) -> bool:
    """`w.data`, `w.data[i]`: a tensor's storage, without its autograd history; what is written
    there (`w.data -= delta`, `w.data = t`) keeps none of the written value's."""
    while type(target) is cst.Subscript:
        target = target.value
    return type(target) is cst.Attribute and target.attr.value == "data"


def last_statement(block: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    """The small statement a block ends with (the `break` of `if full: ...; break`), in an indented
    block or on the line of its colon; None when it ends with a compound statement."""
    if type(block) is cst.SimpleStatementSuite:
        return block.body[-1] if block.body else None
    last = block.body[-1] if type(block) is cst.IndentedBlock and block.body else None
    return last.body[-1] if type(last) is cst.SimpleStatementLine and last.body else None


def _left_after(node: cst.CSTNode, unit: Unit) -> set[int]:
    """The loops (by id) that an `if` block holding `node` leaves at its end (`break`: the loop it
    is in; `return` or `raise`: every loop): the node runs once in them, not on each iteration."""
    left: set[int] = set()
    for branch, place in placed(unit, cst.If):
        block = branch.body
        small = last_statement(block) if type(block) is cst.IndentedBlock else None
        if type(small) not in (cst.Break, cst.Return, cst.Raise) or not place.loops:
            continue
        if any(inner is node for inner in walk(block)):
            left |= {id(place.loops[-1])} if type(small) is cst.Break else {id(loop) for loop in place.loops}
    return left


def steps_an_environment(value: cst.BaseExpression) -> bool:
    """`obs, reward, done, info = env.step(action)`: an environment hands the loop a new observation
    at each step, as a loader hands it a batch (an optimizer's or a scheduler's `step()` gives
    nothing to keep)."""
    return type(value) is cst.Call and callee_name(value) == "step" and bool(value.args)


def iterates_examples(loop: cst.For | cst.While, unit: Unit) -> bool:
    """An evaluation's loop over data, whatever its names: in a function that evaluates, a loop that
    runs a network on an array batched by hand (`range(0, len(X), batch_size)`), on pairs of
    examples (`for x, y in zip(X_test, y_test)`, `for src, tgt in pairs`), on items named for
    examples (`for ex in eval_examples`) or on data it indexes (`x, y = dataset[i]`). Without a
    `backward()`, the same loop in a loss over a batch's views cannot be told apart by its shape."""
    if type(loop) is not cst.For or not _evaluates(unit):
        return False
    return (
        batch_starts(loop.iter)
        or _pairs_run_through_a_network(loop, unit)
        or _data_indexed(loop, unit)
        or _windows_of_an_input(loop, unit)
    )


def runs_in_chunks(loop: cst.For | cst.While, unit: Unit) -> bool:
    """An evaluation's loop only by its function's name and the windows it cuts from an input:
    `for i in range(0, B, chunk)` in NeRF's `inference`, which runs the network on its input in
    chunks. Whether that is an evaluation depends on what the function does with the result."""
    return (
        type(loop) is cst.For
        and not switches_to_eval(unit)
        and _windows_of_an_input(loop, unit)
        and not (batch_starts(loop.iter) or _pairs_run_through_a_network(loop, unit) or _data_indexed(loop, unit))
        and not _scores(loop)
    )


def _scores(loop: cst.For) -> bool:
    """A loop whose body computes a loss (`loss = criterion(...)`, `model(ids, labels=ids).loss`):
    it scores windows of an input, as a perplexity does."""
    return any(
        (type(node) is cst.Name and names_a_loss_value(node.value))
        or (type(node) is cst.Attribute and names_a_loss_value(node.attr.value))
        for node in walk(loop.body)
    )


def decodes(loop: cst.For | cst.While, unit: Unit, imports: Imports) -> bool:
    """A loop that generates, in a function that evaluates or is named for generating
    (`generate`, `sample`, `decode`): each iteration extends a sequence with what it produced
    (`ids = torch.cat([ids, next_token], dim=-1)`, in its body or in a function of its own that it
    calls), so it runs as many times as tokens are made."""
    node = unit.node
    words = set(node.name.value.lower().split("_")) if type(node) is cst.FunctionDef else set()
    if not (words & _GENERATION_WORDS or _evaluates(unit)):
        return False
    steps = {id(step): step for n in loop_calls(unit, loop) if (step := _nested_called(n, unit)) is not None}
    in_steps = (n for step in steps.values() for n in own_nodes(step.body) if type(n) is cst.Assign)
    for statement in [*_loop_assignments(unit, loop), *in_steps]:
        if type(statement.value) is not cst.Call:
            continue
        if imports.qualify(statement.value.func) not in ("torch.cat", "torch.concat", "torch.hstack"):
            continue
        first = statement.value.args[0].value if statement.value.args else None
        parts = first.elements if isinstance(first, (cst.List, cst.Tuple)) else []
        grown = {name for t in statement.targets for name in target_names(t.target)}
        if any(type(part.value) is cst.Name and part.value.value in grown for part in parts):
            return True
    return False


def names_generation(unit: Unit) -> bool:
    """A function named for generating: `generate`, `sample`, `decode`, `beam_search`."""
    node = unit.node
    return type(node) is cst.FunctionDef and bool(set(node.name.value.lower().split("_")) & _GENERATION_WORDS)


def entries_replaced(loop: cst.For) -> tuple[str, list[cst.BaseExpression]] | None:
    """A loop over a dict's keys or items that writes each entry anew (`for k, v in logs.items():
    logs[k] = v.item()`, or only where the entry is a tensor: `if isinstance(info[k], torch.Tensor):
    info[k] = info[k].detach().cpu().numpy()`): the dict's name and the values written. None where
    an entry may be left as it was (a write under another test) or another key is written."""
    iterated = loop.iter
    if type(iterated) is cst.Call and callee_name(iterated) == "list" and len(iterated.args) == 1:
        iterated = iterated.args[0].value
    method, owner = None, iterated
    if type(iterated) is cst.Call and type(iterated.func) is cst.Attribute and not iterated.args:
        method, owner = iterated.func.attr.value, iterated.func.value  # `logs.items()`
    target = loop.target
    if method not in (None, "keys", "items"):
        return None
    if method == "items" and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
        key, item = target.elements[0].value, target.elements[1].value
    else:
        key, item = target, None
    if type(owner) is not cst.Name or type(key) is not cst.Name or (method == "items") != (item is not None):
        return None
    entry = cst.Subscript(value=owner, slice=[cst.SubscriptElement(cst.Index(key))])

    def guards_a_tensor(test: cst.BaseExpression) -> bool:  # `isinstance(info[k], torch.Tensor)`
        if not (type(test) is cst.Call and test.args):
            return False
        checked = test.args[0].value
        name = dotted_name(test.func) or ""
        of_entry = same_code(checked, entry) or (item is not None and same_code(checked, item))
        tensor_test = name.endswith("is_tensor") or (
            name == "isinstance" and len(test.args) == 2 and (dotted_name(test.args[1].value) or "").endswith("Tensor")
        )
        return of_entry and tensor_test

    def copies_the_entry(value: cst.BaseExpression) -> bool:
        return (
            type(value) is cst.Call
            and callee_name(value) in ("deepcopy", "copy")
            and len(value.args) == 1
            and (same_code(value.args[0].value, entry) or (item is not None and same_code(value.args[0].value, item)))
        )

    written: list[cst.BaseExpression] = []

    def scan(statements: Sequence[cst.CSTNode], partial: bool) -> bool:
        """Whether the writes to the dict in `statements` are each entry's, and each on every path
        that has a tensor there (`partial`: under another test)."""
        for statement in statements:
            if type(statement) is cst.If:
                alternative = statement.orelse
                if not scan(statement.body.body, partial or not guards_a_tensor(statement.test)):
                    return False
                if alternative is not None and not scan(
                    alternative.body.body if type(alternative) is cst.Else else [alternative], True
                ):
                    return False
                continue
            small = (
                statement.body[0]
                if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1
                else statement
            )
            for node in [statement, *own_nodes(statement)]:
                if type(node) is not cst.Assign:
                    continue
                for assigned in node.targets:
                    if type(assigned.target) is cst.Subscript and same_code(assigned.target.value, owner):
                        if copies_the_entry(node.value) and same_code(assigned.target, entry):
                            continue  # `info[k] = copy.deepcopy(info[k])`: the entry as it is by then
                        if partial or node is not small or not same_code(assigned.target, entry):
                            return False  # an entry left as it was on some path, another key, a nested write
                        written.append(node.value)
        return True

    if not scan(loop.body.body, False) or not written:
        return None
    return owner.value, written


def refined_state(unit: Unit, loop: cst.For | cst.While) -> set[str]:
    """A sampler's state: what the iteration rebuilds from the network's output and from its own
    previous value (`eps = self.unet(x, t)`, `x0 = (x - s * eps) / a`, `x = a_prev * x0 + d`; a beam's
    scores, through the candidates it keeps: `scores = torch.stack(kept)`), for the next iteration
    to read again. (`carried_names` sees only a state read in its own assignment.)"""
    earlier: dict[str, set[str]] = {}  # a name assigned in this iteration -> the names of the previous one it reads
    networked: set[str] = set()  # names assigned in this iteration from a network's output
    refined: set[str] = set()
    steps = [step for call in loop_calls(unit, loop) if (step := _nested_called(call, unit)) is not None]
    body = [*own_nodes(loop.body), *(n for step in steps for n in own_nodes(step.body))]  # `_step(t)`'s too
    for written, value, adds in value_flows(body):
        read = names_in(value)
        previous = set().union(*(earlier.get(name, {name}) for name in read))
        from_network = bool(read & networked) or any(
            type(n) is cst.Call and _runs_a_network(n, unit) for n in [value, *walk(value)]
        )
        for name in written:
            if name in previous and from_network:
                refined.add(name)
            earlier[name] = (earlier.get(name, set()) if adds else set()) | previous
            if from_network:
                networked.add(name)
    return refined


def value_flows(nodes: Iterable[cst.CSTNode]) -> Iterator[tuple[set[str], cst.BaseExpression, bool]]:
    """The names each statement writes, what they take their values from, and whether it adds to
    what they held: `a = v`, `for a in v`, `a.append(v)` and `a += [v]` (adds)."""
    for node in nodes:
        if type(node) is cst.Assign:
            yield {name for t in node.targets for name in target_names(t.target)}, node.value, False
        elif type(node) is cst.For:
            yield target_names(node.target), node.iter, False
        elif type(node) is cst.AugAssign:
            yield target_names(node.target), node.value, True
        elif type(node) is cst.Call and callee_name(node) in ("append", "extend") and node.args:
            grown = receiver(node)
            if type(grown) is cst.Name:
                yield {grown.value}, node.args[0].value, True


_GENERATION_WORDS = frozenset(["generate", "generation", "sample", "sampling", "decode", "decoding", "greedy", "beam"])


def _nested_called(call: cst.Call, unit: Unit) -> cst.FunctionDef | None:
    """The function `unit` defines that `call` runs by its name (`_step(batch)`)."""
    nested = unit.defs.get(call.func.value) if type(call.func) is cst.Name else None
    return nested.node if nested is not None and type(nested.node) is cst.FunctionDef else None


def _windows_of_an_input(loop: cst.For, unit: Unit) -> bool:
    """`for begin in range(0, seq_len, stride)` after `seq_len = ids.size(1)`, or over a generator
    of the file that loops so (`for b, e in self.windows(n_tokens)`): windows or chunks of an input,
    as many as it is long."""
    iterable = loop.iter
    while type(iterable) is cst.Call and callee_name(iterable) in ("enumerate", "tqdm") and iterable.args:
        iterable = iterable.args[0].value  # `enumerate(...)`, `tqdm(range(n), desc=...)`
    if type(iterable) is not cst.Call:
        return False
    if (stop := _strided_range(iterable)) is not None:
        return _a_length(stop, unit.bindings)
    if dotted_name(iterable.func) == "range" and len(iterable.args) == 1:
        return _a_count_of_windows(iterable.args[0].value, unit)
    generator = _function_called(iterable, unit)
    if generator is None:
        return False
    params = [p.name.value for p in generator.params.params]
    params = params[1:] if type(iterable.func) is cst.Attribute else params  # a method's `self`
    given = dict(zip(params, [a.value for a in iterable.args if a.keyword is None], strict=False))
    for inner in own_nodes(generator.body):
        stop = _strided_range(inner.iter) if type(inner) is cst.For else None
        if type(stop) is cst.Name and stop.value in given and _a_length(given[stop.value], unit.bindings):
            return True
    return False


def _strided_range(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """The stop of `range(start, stop, step)`."""
    if type(iterable) is not cst.Call or dotted_name(iterable.func) != "range":
        return None
    args = [arg.value for arg in iterable.args if arg.keyword is None]
    return args[1] if len(args) == 3 else None


def _a_count_of_windows(expr: cst.BaseExpression, unit: Unit) -> bool:
    """`ids.numel() // seqlen`, `len(samples) // batch_size`, or a name bound to one, where what
    is measured is an input: a parameter of the function, or token ids it reads
    (`testenc = enc(text).input_ids`). How many windows of the input there are (`for i in
    range(nsamples): batch = ids[:, i * seqlen : (i + 1) * seqlen]`); not `hidden.size(-1) //
    head_dim` of a network's output (its heads)."""
    counts = [expr, *unit.bindings.get(expr.value, [])] if type(expr) is cst.Name else [expr]
    for count in counts:
        if not (type(count) is cst.BinaryOperation and type(count.operator) is cst.FloorDivide):
            continue
        lengths = (
            [count.left, *unit.bindings.get(count.left.value, [])] if type(count.left) is cst.Name else [count.left]
        )
        if any(_a_length(length, {}) and _an_input(_measured(length), unit) for length in lengths):
            return True
    return False


def _measured(length: cst.BaseExpression) -> cst.BaseExpression:
    """What `len(x)`, `x.numel()`, `x.size(1)` or `x.shape[1]` measures: `x`."""
    if type(length) is cst.Call and callee_name(length) == "len" and length.args:
        return length.args[0].value
    if type(length) is cst.Call and type(length.func) is cst.Attribute:
        return length.func.value
    if type(length) is cst.Subscript and type(length.value) is cst.Attribute:
        return length.value.value
    return length


def _an_input(measured: cst.BaseExpression, unit: Unit) -> bool:
    """A parameter of the function, or a name it binds to token ids (`enc(text).input_ids`)."""
    if type(measured) is not cst.Name:
        return False
    if measured.value in {p.name.value for p in unit.params}:
        return True
    return any(_reads_ids(value) for value in unit.bindings.get(measured.value, []))


def _reads_ids(value: cst.BaseExpression) -> bool:
    """`enc(text).input_ids`, `encoded["input_ids"].to(device)`: token ids read off a record."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and callee_name(value) in ("to", "cuda"):
        value = value.func.value
    if type(value) is cst.Attribute:
        return names_integer_field(value.attr.value)
    key = text_key(value) if type(value) is cst.Subscript else None
    return key is not None and names_integer_field(key)


def _a_length(expr: cst.BaseExpression, bound: Mapping[str, list[cst.BaseExpression]]) -> bool:
    """`len(x)`, `x.size(1)`, `x.shape[-1]`, `x.numel()`, or a name bound to one."""
    if type(expr) is cst.Name:
        return any(_a_length(value, {}) for value in bound.get(expr.value, []))
    if type(expr) is cst.Call:
        return callee_name(expr) in ("len", "size", "numel")
    return type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape"


def _function_called(call: cst.Call, unit: Unit) -> cst.FunctionDef | None:
    """The function of the file a call runs, by its name or as a method of `self`."""
    if type(call.func) is cst.Name:
        called = unit.lookup_def(call.func.value)
        return called.node if called is not None and type(called.node) is cst.FunctionDef else None
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == unit.self_name:
        return unit.cls.methods.get(func.attr.value) if unit.cls is not None else None
    return None


def _evaluates(unit: Unit) -> bool:
    """A function named for evaluation (`evaluate`, `test_epoch`, `predict`), or one that switches a
    model to evaluation mode (`model.eval()`); not a network's own code (`forward_test`, a method
    of a module class: mmaction runs its clips in chunks there)."""
    node = unit.node
    if unit.cls is not None and unit.cls.is_module:
        return False
    if type(node) is cst.FunctionDef:
        if node.name.value.startswith("forward"):
            return False
        if set(node.name.value.lower().split("_")) & _EVALUATION_WORDS:
            return True
    return switches_to_eval(unit)


def switches_to_eval(unit: Unit) -> bool:
    """`model.eval()` in the function's own code."""
    return any(callee_name(call) == "eval" and not call.args for call, _ in placed(unit, cst.Call))


_EVALUATION_WORDS = frozenset(["eval", "evaluate", "evaluation", "val", "valid", "validate", "validation", "test",
                               "predict", "prediction", "infer", "inference", "score", "perplexity", "ppl"])  # fmt: skip


def _pairs_run_through_a_network(loop: cst.For, unit: Unit) -> bool:
    """Items taken apart into inputs and targets (or zipped, or named for examples), not a
    computed collection (`range`, `.items()`, `named_parameters()`), that the body runs a network on."""
    target: cst.BaseExpression = loop.target
    iterable = loop.iter
    if type(target) is cst.Tuple and type(iterable) is cst.Call and callee_name(iterable) == "enumerate":
        if len(target.elements) != 2 or not iterable.args:
            return False
        target, iterable = target.elements[1].value, iterable.args[0].value  # the counter is no item
    items = target_names(target)
    zipped = type(iterable) is cst.Call and callee_name(iterable) == "zip"
    if not (len(items) >= 2 or zipped or _names_examples(iterable)) or _computed(iterable):
        return False
    return _runs_a_network_on(loop, unit, lambda expr: bool(names_in(expr) & items))


def _data_indexed(loop: cst.For, unit: Unit) -> bool:
    """`for i in range(len(dataset)): x, y = dataset[i]`, `X_val[b * bs:(b + 1) * bs]`: an index
    into data (named so: `dataset`, `X_test`, `val_images`) that the loop runs a network on."""
    if type(loop.target) is not cst.Name or type(loop.iter) is not cst.Call or callee_name(loop.iter) != "range":
        return False
    index = loop.target.value

    def reads_data(expr: cst.BaseExpression) -> bool:
        return any(
            type(node) is cst.Subscript
            and (name := dotted_name(node.value)) is not None
            and _names_split_data(name)
            and index in names_in(node.slice[0].slice)
            for node in [expr, *own_nodes(expr)]
        )

    return _runs_a_network_on(loop, unit, reads_data)


def _names_split_data(name: str) -> bool:
    """`dataset`, `self.val_data.x`, `X_test`, `test_images`: data, or arrays of a split."""
    parts = name.lower().split(".")
    words = {word for part in parts for word in part.split("_")}
    return any(_names_data(part) for part in parts) or bool(words & _SPLIT_WORDS) or bool(words & _EXAMPLE_WORDS)


_SPLIT_WORDS = frozenset(_SPLITS)


def _runs_a_network_on(loop: cst.For, unit: Unit, given: Callable[[cst.BaseExpression], bool]) -> bool:
    """Whether the loop's body hands a network what `given` picks out, or a name made from it
    (`xb = x.to(device)`, `inputs = tokenizer(src)`, `x, y = dataset[i]`)."""
    assignments = [node for node in own_nodes(loop.body) if type(node) is cst.Assign]
    derived: set[str] = set()
    for _ in range(3):
        derived |= {
            name
            for node in assignments
            if given(node.value) or names_in(node.value) & derived
            for t in node.targets
            for name in target_names(t.target)
        }
    return any(
        type(node) is cst.Call
        and any(given(arg.value) or names_in(arg.value) & derived for arg in node.args)
        and _runs_a_network(node, unit)
        for node in own_nodes(loop.body)
    )


def _names_examples(iterable: cst.BaseExpression) -> bool:
    """`for ex in eval_examples`, `for sentence in test_sentences`: items named for what a dataset holds."""
    name = dotted_name(iterable)
    return name is not None and name.rsplit(".", 1)[-1].lower().rsplit("_", 1)[-1] in _EXAMPLE_WORDS


_EXAMPLE_WORDS = frozenset(["examples", "samples", "instances", "sentences", "texts", "documents", "docs", "queries",
                            "questions", "pairs", "records", "images", "utterances", "articles"])  # fmt: skip


# Calls whose items are computed, not data: `range(n)`, `d.items()`, `model.named_parameters()`;
# and the builtins that pass their arguments' items on (`zip`, `enumerate`).
COMPUTED_COLLECTIONS = frozenset(["range", "children", "modules", "named_children", "named_modules", "parameters",
                                  "named_parameters", "items", "values", "keys"])  # fmt: skip
ITEM_WRAPPERS = frozenset(["enumerate", "zip", "reversed", "list", "tuple", "sorted"])


def _computed(iterable: cst.BaseExpression) -> bool:
    """`range(n)`, `d.items()`, `model.named_buffers()`: no data."""
    if type(iterable) is not cst.Call:
        return False
    name = callee_name(iterable)
    if name in ITEM_WRAPPERS:
        return bool(iterable.args) and all(_computed(arg.value) for arg in iterable.args if not arg.keyword)
    return name in COMPUTED_COLLECTIONS or (name is not None and name.startswith("named_"))


def _runs_a_network(call: cst.Call, unit: Unit) -> bool:
    """`model(x)`, `self.encoder(src)`, or a function of the file that does (`_step(x, y)`), or a
    method of the class (`self.process(clip, target)`)."""
    called = dotted_name(call.func)
    if called is None:
        return False
    if calls_a_network(call):
        return True
    defined = unit.lookup_def(called) if "." not in called else None
    step = defined.node if defined is not None else None
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and unit.cls is not None:
        step = unit.cls.methods.get(func.attr.value) if func.value.value == unit.self_name else None
    return (
        type(step) is cst.FunctionDef
        and step is not unit.node
        and any(type(node) is cst.Call and calls_a_network(node) for node in own_nodes(step.body))
    )


def calls_a_network(call: cst.Call) -> bool:
    """`model(x)`, `self.encoder(src)`: a call of a callee named for a network."""
    called = dotted_name(call.func)
    return called is not None and is_model_name(called.rsplit(".", 1)[-1])


def _is_loader_call(imports: Imports, value: cst.BaseExpression) -> bool:
    """`DataLoader(ds)`, or a call of a function named for making one (`self.train_dataloader()`,
    `asr_model._setup_transcribe_dataloader(config)`, `build_val_loader(cfg)`)."""
    if type(value) is not cst.Call:
        return False
    if (imports.qualify(value.func) or dotted_name(value.func) or "").endswith("DataLoader"):
        return True
    return (callee_name(value) or "").lower().rsplit("_", 1)[-1] in ("dataloader", "loader")


# What a container's assignments must be for it to be one: displays, comprehensions, constructors.
_CONTAINER_CALLS = frozenset(["list", "dict", "set", "OrderedDict", "defaultdict", "deque"])


def container_binding(value: cst.BaseExpression) -> str | None:
    """The kind of container an assigned value makes ("list", "dict", "set", "tuple"), else None."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return "list"
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return "dict"
    if isinstance(value, (cst.Set, cst.SetComp)):
        return "set"
    if type(value) is cst.Tuple:
        return "tuple"
    if type(value) is cst.Call and callee_name(value) in _CONTAINER_CALLS:
        name = callee_name(value)
        return "dict" if name in ("dict", "OrderedDict", "defaultdict") else "list" if name != "set" else "set"
    return None


_CONTAINER_ANNOTATIONS = frozenset(
    ["list", "List", "dict", "Dict", "Sequence", "MutableSequence", "Mapping", "tuple", "Tuple"]
)


def declared_container(index: ModuleIndex, unit: Unit, expr: cst.BaseExpression) -> str | None:
    """What container a name or `self.x` is, when every assignment the file shows says so.

    `None` (unknown) when any assignment is something else (a call's result may be a generator),
    or when nothing is assigned. Assignments of `None` are ignored: `self.x = None` until set.
    """
    values: list[cst.BaseExpression] = []
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
        if unit.cls is None or expr.value.value != unit.self_name:
            return None
        values = [v for v, _ in unit.cls.attribute_values.get(expr.attr.value, [])]
    elif type(expr) is cst.Name:
        param = _param(unit, expr.value)
        if param is not None:
            return _annotated_container(param)
        values = unit.lookup_bindings(expr.value)
        if not values and expr.value in index.module_unit.bindings:
            values = index.module_unit.bindings[expr.value]
    else:
        return None
    kinds = {container_binding(v) for v in values if not (type(v) is cst.Name and v.value == "None")}
    if len(kinds) != 1 or None in kinds:
        return None
    return kinds.pop()


def _param(unit: Unit, name: str) -> cst.Param | None:
    current: Unit | None = unit
    while current is not None:
        if name in current.bindings:
            return None
        node = current.node
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            for param in all_params(node.params):
                if param.name.value == name:
                    return param
        current = current.parent
    return None


def _annotated_container(param: cst.Param) -> str | None:
    if param.annotation is None:
        return None
    annotation = param.annotation.annotation
    head = annotation.value if type(annotation) is cst.Subscript else annotation
    name = (dotted_name(head) or "").rsplit(".", 1)[-1]
    if name not in _CONTAINER_ANNOTATIONS:
        return None
    return "dict" if name in ("dict", "Dict", "Mapping") else "tuple" if name in ("tuple", "Tuple") else "list"


def _around_the_steps(loop: cst.For | cst.While, unit: Unit, imports: Imports) -> bool:
    """An epoch loop: it reads no data itself, and a loop inside it is the one over batches; what
    it calls beside that loop (`self.evaluate()` after it) runs once per epoch."""
    if iterates_loader(loop, unit, imports) or iterates_examples(loop, unit):
        return False
    inner = (node for node in own_nodes(loop.body) if type(node) is cst.For or type(node) is cst.While)
    return any(is_training_iteration(node, unit, imports) for node in inner)


def assign_loop_step_roles(index: ModuleIndex) -> None:
    """A function that a loop over batches calls by name (`train_step(model, batch, stats)`, a
    nested `step(x, y)`) runs once per batch, as a framework's per-step method does: what it keeps
    in a global, a closure cell or a container its caller passes grows per batch. Its parameters
    take what the loop passes. A method its own class calls so, on `self`, runs once per batch too;
    so does a method of an object the caller keeps (`self.monitor.push(kl)`)."""
    own_loops: list[Unit] = []  # methods their class's loops call on `self`: their helpers run as often
    for caller in index.units:
        if not caller.has_loop:
            continue
        once = run_once_calls(caller) | first_iteration_calls(caller)  # `if restore: ...; restore = False`
        loops: list[cst.For | cst.While] = [loop for loop, _ in placed(caller, cst.For)]
        loops += [loop for loop, _ in placed(caller, cst.While)]
        for loop in loops:
            if _around_the_steps(loop, caller, index.imports) or not (
                is_training_iteration(loop, caller, index.imports) or _calls_a_training_step(loop, caller, index)
            ):
                continue
            made_per_iteration: set[str] | None = None
            for call in loop_calls(caller, loop):
                if id(call) in once:
                    continue
                callee = _called_unit(call, caller, index)
                if callee is None or type(callee.node) is not cst.FunctionDef or _has_named_role(callee):
                    continue
                if callee is caller:
                    continue  # `self.evaluate(ds)` per dataset inside `evaluate`: a recursion, not a step
                callee.roles[Role.STEP] = (
                    f"`{qualified_name(callee)}` (called once per batch by the loop in `{qualified_name(caller)}`)"
                )
                callee.call_sites.append((call, caller))
                callee.called_per_batch = True
                own_loops.append(callee)
                if made_per_iteration is None:
                    made_per_iteration = reset_every_iteration(loop, caller) | assigned_names(loop.body)
                params = [p.name.value for p in callee.argument_params]
                for position, arg in arguments_by_position(call, callee).items():  # (a method's `self` not counted)
                    if position < len(params) and type(arg) is cst.Name and arg.value not in made_per_iteration:
                        callee.given_containers.setdefault(
                            params[position], (caller, arg.value)
                        )  # made before the loop
    spread_repeating_roles(index, own_loops)
    hand_on_containers(index)
    for unit in index.units:  # a step whose loop is elsewhere (another module, a framework)
        if unit.roles or unit.is_method or type(unit.node) is not cst.FunctionDef or unit.parent is None:
            continue
        if unit.parent is index.module_unit:
            stepping = _named_a_step(unit.name) or steps_once(unit)
        else:  # a step its function hands to a framework's loop (`Engine(update)`), not one it calls
            stepping = type(unit.parent.node) is cst.FunctionDef and steps_once(unit) and not _called_by_name(unit)
        if stepping:
            unit.roles[Role.STEP] = f"`{unit.name}` (called once per batch)"


def _called_by_name(unit: Unit) -> bool:
    """Whether the function that defines `unit` calls it by its name."""
    assert unit.parent is not None
    return any(
        type(call.func) is cst.Name and call.func.value == unit.name for call, _ in placed(unit.parent, cst.Call)
    )


def _named_a_step(name: str) -> bool:
    """A module function named for one step: `train_step`, `eval_batch`, `forward_step` (not a
    utility that only mentions batches: `repeat_tensor_to_batch_size`, `replace_batch_norm`)."""
    return name.endswith(("_step", "_batch")) and name != "_step"


def _has_named_role(unit: Unit) -> bool:
    """A role other than the training step guessed from its `backward()` call or from a name
    (`log_step`, `eval_batch`), which a loop seen calling it replaces by the loop's own. A
    framework's per-step methods (`training_step`, a meter's `update`) keep theirs."""
    if not unit.roles:
        return False
    if set(unit.roles) != {Role.STEP}:
        return True
    return unit.name in STEP_METHODS or unit.name.startswith(("on_", "after_", "before_"))


# Annotations of containers that hold items of one class: `list[Callback]`, `Sequence[Metric]`.
_ITEM_CONTAINERS = frozenset(["list", "List", "Sequence", "Iterable", "Collection", "tuple", "Tuple"])


def element_class(words: set[str]) -> str | None:
    """The one class of the items an annotation's container holds: `list[Callback]`,
    `Optional[Sequence[Metric]]` -> Callback, Metric; not a mapping's nor a plain class's."""
    if not words & _ITEM_CONTAINERS:
        return None
    return single_class(words - _ITEM_CONTAINERS - {"typing"})


def _calls_a_training_step(loop: cst.For | cst.While, caller: Unit, index: ModuleIndex) -> bool:
    """`for update in range(n): agent.update()`: a loop that calls a method of the file's object
    that is one training step (it calls `backward()` once), however it counts its iterations."""
    return any(
        (callee := _called_unit(call, caller, index)) is not None and callee is not caller and steps_once(callee)
        for call in loop_calls(caller, loop)
    )


def _called_unit(call: cst.Call, caller: Unit, index: ModuleIndex) -> Unit | None:
    """The function of this file a loop's call runs: one it names (`train_step(...)`), a method of
    `self` (`self.eval_one(batch)`), or a method of an instance whose class the code shows:
    `trainer.step(batch)` after `trainer = Trainer(...)` or for a parameter annotated `trainer: Trainer`. (A class guessed from the method's name alone
    would make `optimizer.step()` run a project scheduler's `step`.)"""
    func = call.func
    if type(func) is cst.Name:
        return caller.lookup_def(func.value)
    if type(func) is not cst.Attribute:
        return None
    if isinstance(func.value, (cst.Attribute, cst.Subscript)):
        return next(iter(member_methods(index, func, caller)), None)  # `self.controller.act(obs)`
    if type(func.value) is not cst.Name:
        return None
    if func.value.value == caller.self_name and caller.cls is not None:  # `self.eval_one(batch)`
        found = method_of(index, caller.cls, func.attr.value)
        inherited = sibling_methods(index, caller.cls, func.attr.value) if found is None else []
        return found if found is not None else (inherited[0] if len(inherited) == 1 else None)
    name = func.value.value
    cls = index.classes.get(_instance_class(name, caller) or _passed_class(name, caller, index) or "")
    method = cls.methods.get(func.attr.value) if cls is not None else None
    return index.method_units[id(method)] if method is not None else None


def _passed_class(name: str, caller: Unit, index: ModuleIndex) -> str | None:
    """For a parameter of a module-level function, the one class of the file whose instance every
    call of the function in the file passes there (`logger = ScalarLogger(...)`, then
    `train_one_epoch(model, loader, logger)`)."""
    if caller.is_method or caller.parent is None or type(caller.node) is not cst.FunctionDef:
        return None
    params = [p.name.value for p in caller.params]
    if name not in params:
        return None
    made: set[str | None] = set()
    for call, site in index.named_calls.get(caller.name, []):
        given = arguments_by_position(call, caller).get(params.index(name))
        if type(given) is cst.Name:
            made.add(_instance_class(given.value, site))
        elif type(given) is cst.Call:
            made.add(callee_name(given))
        else:
            return None
    found = made.pop() if len(made) == 1 else None
    return found if found in index.classes else None


def _instance_class(name: str, caller: Unit) -> str | None:
    """The class name a local or a parameter of `caller` is an instance of, by its every binding
    (`x = Cls(...)`) or by its annotation (`x: Cls`, `x: Cls | None`)."""
    bound = caller.lookup_bindings(name)
    if bound:
        classes = {callee_name(value) if type(value) is cst.Call else None for value in bound}
        return classes.pop() if len(classes) == 1 else None
    return annotated_class(name, caller)


def carried_names(loop: cst.For | cst.While) -> set[str]:
    """Names whose value flows from one iteration into the next: `x = block(x)`, `h = cell(x, h)`.

    A name the iteration assigns before it reads (the loop variable, `x = batch[0]`) is fresh
    in every iteration, even when later rebound from itself (`x = x.to(device)`).
    """
    fresh = target_names(loop.target) if type(loop) is cst.For else set()
    carried: set[str] = set()
    for node in own_nodes(loop.body):
        if (type(node) is cst.Assign or type(node) is cst.AnnAssign) and node.value is not None:
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            names = set().union(*(target_names(t) for t in targets))
            carried |= (names & names_in(node.value)) - fresh
            fresh |= names
    return carried


def reset_every_iteration(loop: cst.For | cst.While, unit: Unit | None = None) -> set[str]:
    """Names the loop body assigns afresh on every iteration: unconditional, not accumulating
    (nor handed back by a function of the file, `acc = accumulate(acc, out)`, in `unit`)."""
    reset = target_names(loop.target) if type(loop) is cst.For else set()
    body: list[cst.BaseStatement] = list(loop.body.body) if type(loop.body) is cst.IndentedBlock else []
    while body:
        statement = body.pop(0)
        if type(statement) is cst.With and type(statement.body) is cst.IndentedBlock:
            body[:0] = statement.body.body
            continue
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Assign:
                for target in small.targets:
                    grows = accumulated_operand(target.target, small.value) or concatenated_operand(
                        target.target, small.value
                    )
                    if grows is None and not _reads_itself(small.value, target.target, unit):
                        reset |= target_names(target.target)
            elif type(small) is cst.AnnAssign and small.value is not None:
                reset |= target_names(small.target)
    return reset


def _reads_itself(value: cst.BaseExpression, target: cst.BaseExpression, unit: Unit | None) -> bool:
    """`self.avg = self.update_average(loss, self.avg, step)`: the new value is made from the old
    one (an accumulation through a helper), not assigned afresh; so is `acc = accumulate(acc, out)`
    where the file's `accumulate` adds to the container it is given and returns it."""
    if type(target) is cst.Name and type(value) is cst.Call and unit is not None:
        return _handed_back(value, target.value, unit)
    dotted = dotted_name(target) if type(target) is cst.Attribute else None
    return dotted is not None and mentions(value, dotted)  # `x = x.to(device)` rebinds a name: a reset


def _handed_back(call: cst.Call, name: str, unit: Unit) -> bool:
    """Whether `call` is of a function of the file that returns, on every return, the parameter
    that `name` is passed to."""
    helper = unit.lookup_def(call.func.value) if type(call.func) is cst.Name else None
    if helper is None or type(helper.node) is not cst.FunctionDef:
        return False
    passed = [
        p for p, arg in arguments_by_position(call, helper).items() if type(arg) is cst.Name and arg.value == name
    ]
    params = [p.name.value for p in helper.argument_params]
    if len(passed) != 1 or passed[0] >= len(params):
        return False
    returns = placed(helper, cst.Return)
    return bool(returns) and all(
        type(node.value) is cst.Name and node.value.value == params[passed[0]] for node, _ in returns
    )


def free_names(closure: cst.CSTNode) -> set[str]:
    """The names a lambda or nested def reads from the scopes around it."""
    if type(closure) is cst.Lambda:
        return names_in(closure.body) - {p.name.value for p in all_params(closure.params)}
    if type(closure) is cst.FunctionDef:
        params = {p.name.value for p in all_params(closure.params)}
        return names_in(closure.body) - params - assigned_names(closure.body)
    return set()


def accumulated_operand(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`v` in `t = t + v`, `t = v + t`, and in the running averages `t = 0.9 * t + 0.1 * v` and
    `t = (t * n + v) / (n + 1)`: the new value is the old one, scaled, plus `v`."""
    if type(value) is not cst.BinaryOperation:
        return None
    if isinstance(value.operator, (cst.Add, cst.Subtract)):
        if _scaled(value.left, target):
            return value.right
        if type(value.operator) is cst.Add and _scaled(value.right, target):
            return value.left
        if _a_term(value.left, target):
            return value  # `t = t + a + b`: the whole sum, whose other terms are what is added
    elif isinstance(value.operator, (cst.Multiply, cst.Divide)):
        return accumulated_operand(target, value.left)
    return None


def _a_term(expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """Whether the target is a term of a sum that more terms are then added to: `t + a` in `t + a + b`."""
    if not (type(expr) is cst.BinaryOperation and isinstance(expr.operator, (cst.Add, cst.Subtract))):
        return False
    right_is = type(expr.operator) is cst.Add and _scaled(expr.right, target)
    return _scaled(expr.left, target) or right_is or _a_term(expr.left, target)


def _scaled(expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
    """`t`, `0.9 * t`, `t * n`, `t / 2`: the target itself, multiplied or divided by something."""
    if same_code(expr, target):
        return True
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _scaled(expr.left, target) or (type(expr.operator) is cst.Multiply and _scaled(expr.right, target))
    return False


_CONCATENATIONS = frozenset(["cat", "concat", "concatenate", "stack", "vstack", "hstack", "row_stack", "dstack"])


def concatenated_operand(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """`t` in `buf = torch.cat([buf, t])`, also on a branch of a conditional expression
    (`buf = t if buf is None else torch.cat([buf, t])`): the buffer grows by `t` (a slice of it
    would bound it)."""
    if type(value) is cst.IfExp:
        return concatenated_operand(target, value.body) or concatenated_operand(target, value.orelse)
    if not (type(value) is cst.Call and callee_name(value) in _CONCATENATIONS and value.args):
        return None
    parts = value.args[0].value
    if not isinstance(parts, (cst.List, cst.Tuple)):
        return None
    elements = [element.value for element in parts.elements]
    if not any(same_code(element, target) for element in elements):
        return None
    others = [element for element in elements if not same_code(element, target)]
    return others[0] if len(others) == 1 else parts


def list_extension(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.List | cst.Tuple | None:
    """The items a list display adds to the list it rebinds: `[h]` in `xs = xs + [h]` (or
    `[h] + xs`), `[*xs, h]` itself: the list grows, as with `xs.append(h)`."""
    if type(value) is cst.BinaryOperation and type(value.operator) is cst.Add:
        for own, added in ((value.left, value.right), (value.right, value.left)):
            if same_code(own, target) and isinstance(added, (cst.List, cst.Tuple)):
                return added
        return None
    if isinstance(value, (cst.List, cst.Tuple)) and any(
        type(element) is cst.StarredElement and same_code(element.value, target) for element in value.elements
    ):
        return value
    return None


def target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        names: set[str] = set()
        for element in target.elements:
            names |= target_names(element.value)
        return names
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    dotted = dotted_name(target)
    return {dotted} if dotted is not None and isinstance(target, (cst.Name, cst.Attribute)) else set()


def assigned_names(body: cst.BaseSuite) -> set[str]:
    names: set[str] = set()
    for node in own_nodes(body):
        if type(node) is cst.Assign:
            for target in node.targets:
                names |= {n for n in target_names(target.target) if "." not in n}
        elif type(node) is cst.AnnAssign or type(node) is cst.AugAssign or type(node) is cst.For:
            names |= {n for n in target_names(node.target) if "." not in n}
    return names


def calls_and_yields(expr: cst.BaseExpression) -> list[cst.Call | cst.Yield]:
    """Calls and yields inside an expression, innermost first, not entering lambda bodies."""
    found: list[cst.Call | cst.Yield] = []
    stack: list[tuple[cst.CSTNode, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            found.append(node)  # type: ignore[arg-type]
            continue
        if type(node) in LEAVES:
            continue
        if type(node) in (cst.Call, cst.Yield):  # by type: isinstance against LibCST's ABCs is slow
            stack.append((node, True))
        if type(node) is cst.Lambda:
            stack.extend((p.default, False) for p in all_params(node.params) if p.default is not None)
            continue
        stack += [(child, False) for child in reversed(children(node))]
    return found


# Methods a training framework calls once per batch (Lightning and friends): hooks registered there repeat.
_BATCH_METHODS = LIGHTNING_STEPS | TRAINING_STEPS


def repeats_per_step(
    unit: Unit, loops: Sequence[cst.For | cst.While], imports: Imports, target: cst.BaseExpression | None
) -> str | None:
    """Where code that registers a hook on `target` runs again and again, in words: a loop over
    batches, `forward` or a per-batch method (`training_step`); None when it runs once as far as
    we see, or when `target` is made afresh there (a new module takes its hooks with it)."""
    for loop in reversed(loops):
        if is_training_iteration(loop, unit, imports):
            if target is not None and _made_in(target, loop.body):
                return None
            return "in this loop over batches"
    called = next((u for u in _enclosing(unit) if Role.STEP in u.roles and runs_per_batch(u)), None)
    if called is not None:
        if target is not None and _made_in(target, called.node):
            return None
        return f"in {called.roles[Role.STEP]}"
    method = unit.method_unit()
    if method is None:
        return None
    if _repeats_by_name(method):
        if target is not None and _made_in(target, method.node):
            return None
        return f"in `{method.cls.name if method.cls else ''}.{method.name}`".replace("`.", "`")
    if Role.STEP in method.roles and called_from(method, _repeats_by_name):
        # `self._attach_probes()` in `train_step`: a helper runs as often as the step that calls it
        if target is not None and _made_in(target, method.node):
            return None
        return f"in {method.roles[Role.STEP]}"
    return None


def _repeats_by_name(method: Unit) -> bool:
    """`forward`, a framework's per-batch method (`training_step`) or per-iteration hook."""
    return Role.FORWARD in method.roles or method.name in _BATCH_METHODS or _per_iteration_hook(method.name)


def _per_iteration_hook(name: str) -> bool:
    """A framework's hook run on every iteration or batch (`before_train_iter`, `on_train_batch_start`,
    `after_step`): named so, not a generic `update` or `__call__`."""
    return is_step_method(name) and name not in STEP_METHODS and name != "step"


def _enclosing(unit: Unit) -> Iterator[Unit]:
    current: Unit | None = unit
    while current is not None:
        yield current
        current = current.parent


def _made_in(target: cst.BaseExpression, scope: cst.CSTNode) -> bool:
    """Whether the receiver's root name is bound by a call inside `scope` (a fresh object)."""
    root = target
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    if type(root) is not cst.Name:
        return False
    for node in own_nodes(scope):
        if (
            type(node) is cst.Assign
            and type(node.value) is cst.Call
            and callee_name(node.value) not in _LOOKUPS
            and any(type(t.target) is cst.Name and t.target.value == root.value for t in node.targets)
        ):
            return True
    return False


# Calls that look up modules that exist already (`modules = dict(model.named_modules())`), not make them.
_LOOKUPS = frozenset(["dict", "list", "tuple", "getattr", "get_submodule", "named_modules", "modules", "get"])


def hook_registration(expr: cst.BaseExpression, unit: Unit) -> cst.Call | None:
    """The hook registration whose handle `expr` holds: `m.register_forward_hook(f)` itself, inside
    a tuple or dict, or a name the unit binds to one (`h = t.register_hook(f)`)."""
    for node in [expr, *own_nodes(expr)]:
        if type(node) is cst.Call and callee_name(node) in _HOOK_REGISTRATIONS:
            return node
        if type(node) is cst.Name:
            for value in unit.bindings.get(node.value, []):
                if type(value) is cst.Call and callee_name(value) in _HOOK_REGISTRATIONS:
                    return value
    return None


_HOOK_REGISTRATIONS = MODULE_HOOK_REGISTRATIONS | TENSOR_HOOK_REGISTRATIONS


class NoGrad:
    """The nodes of the unit inside `with torch.no_grad():` or `torch.inference_mode()`, found
    when first asked: most units never call `backward()`, and then nobody asks."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit

    @functools.cached_property
    def nodes(self) -> set[int]:
        inside: set[int] = set()
        for node, _ in placed(self.unit, cst.With):  # outer blocks first: an inner one decides for its body
            modes = [mode for item in node.items if (mode := grad_mode_of(item.item)) is not None]
            if modes:
                body = {id(inner) for inner in own_nodes(node.body)}
                inside = inside - body if modes[-1] else inside | body
        return inside


def decorated_no_grad(unit: Unit) -> bool:
    node = unit.node
    return type(node) is cst.FunctionDef and any(grad_mode_of(d.decorator) is False for d in node.decorators)


def drops_graph(unit: Unit) -> bool:
    """Whether a function's own code drops autograd history somewhere: `.detach()`, `.item()`,
    `.tolist()`, `.numpy()`, a `no_grad`/`inference_mode` block or decorator."""
    return decorated_no_grad(unit) or any(callee_name(call) in _DROPS_GRAPH for call, _ in placed(unit, cst.Call))


_DROPS_GRAPH = frozenset(["detach", "detach_", "item", "tolist", "numpy", "no_grad", "inference_mode"])


def parts_run_without_grad(index: ModuleIndex, cls: ClassInfo) -> tuple[list[str], list[Unit]] | None:
    """The classes of the file through which a module's `forward` runs with gradients off: the
    module is built only as a part of modules that run their parts so (llama's `Attention`, built
    in `TransformerBlock.__init__`, which is built in `Transformer.__init__`, whose `forward` is
    `@torch.inference_mode()`): the module and each owner up to one whose methods all turn
    gradients off. None where that does not hold: the file never builds it (the project may: the
    caller asks about these names), names it otherwise (a registry, an alias, a subclass), keeps
    it elsewhere too, reads its holder on another object (`model.layers`), or turns gradients on
    along the way. Returned with the chain: the owners' methods taken here, by the decorator's
    name, to run without gradients; the caller checks what those decorators are."""
    chain: list[str] = []
    decorated: list[Unit] = []
    current = [cls]
    while current:
        owners: list[ClassInfo] = []
        for part in current:
            forward = index.method_units.get(id(part.methods.get("forward")))
            if part.name in chain or part.name in _names_as_bases(index) or forward is None:
                return None  # a cycle of parts, a subclass that may run otherwise, or no forward
            if enables_gradients(forward):
                return None
            chain.append(part.name)
            calls = index.named_calls.get(part.name, [])
            if not calls or _name_uses(index).get(part.name, 0) != len(calls) + 1:  # the calls and the class
                return None
            for call, builder in calls:
                owner = builder.cls
                if owner is None or not owner.is_module or builder.name != "__init__" or owner is part:
                    return None
                held = _attributes_holding(builder, call)
                if not held or held & _attributes_read_elsewhere(index) or not _plain_module(index, owner):
                    return None
                runs = _runs_parts(index, owner, decorated)
                if runs is None:
                    return None
                if runs:  # an undecorated `forward`: it runs as its own owners run it
                    owners.append(owner)
        current = list({id(o): o for o in owners}.values())
    return chain, decorated


def _attributes_holding(init: Unit, call: cst.Call) -> set[str]:
    """The attributes of `self` that hold what `__init__` builds with `call`: `self.attention =
    Attention(args)`, `self.layers = nn.ModuleList([Block(i) for i in ...])`,
    `self.layers.append(Block(i))`, `self.layers += [Block(i)]`; none where it is kept anywhere
    else too (`self.attn = registry[k] = Attention()`)."""
    held: set[str] = set()
    for assign, _ in placed(init, cst.Assign):
        if contains(assign.value, call):
            names = [self_attribute(init, t.target) for t in assign.targets]
            if not all(names):
                return set()
            held |= {name for name in names if name}
    others: list[cst.AugAssign | cst.AnnAssign] = [n for n, _ in placed(init, cst.AugAssign)]  # `self.layers += [b]`
    others += [n for n, _ in placed(init, cst.AnnAssign)]
    for other in others:
        if other.value is not None and contains(other.value, call) and (name := self_attribute(init, other.target)):
            held.add(name)
    for grow, _ in placed(init, cst.Call):
        func = grow.func
        if type(func) is cst.Attribute and func.attr.value in ("append", "extend", "insert"):
            name = self_attribute(init, func.value)
            if name and any(contains(arg.value, call) for arg in grow.args):
                held.add(name)
    return held


_PLAIN_MODULES = frozenset(["torch.nn.Module", "torch.nn.modules.module.Module"])
# Methods that describe the module without running its parts.
_DESCRIBING = frozenset(["__repr__", "__str__", "extra_repr"])


def _plain_module(index: ModuleIndex, owner: ClassInfo) -> bool:
    """An owner whose bases are `nn.Module` or classes of the file that reach it: no base from
    elsewhere brings methods that could run the parts."""
    return all(
        all(base in _PLAIN_MODULES or base in index.classes for base in info.base_names if base)
        and None not in info.base_names
        for info in lineage(index.classes, owner)
    )


def _runs_parts(index: ModuleIndex, owner: ClassInfo, decorated: list[Unit]) -> bool | None:
    """Whether the owner runs its parts in an undecorated `forward` (True) or only in methods that
    turn gradients off (False, adding them to `decorated`); None where another method may run them
    with gradients on, or where `__init__` makes a function that could (a lambda, a nested def)."""
    undecorated_forward = False
    for info in lineage(index.classes, owner):
        for name, method in info.methods.items():
            unit = index.method_units.get(id(method))
            if unit is None:
                return None
            if name == "__init__":
                if any(type(node) is cst.Lambda or type(node) is cst.FunctionDef for node in walk(method.body)):
                    return None
                continue
            if name in _DESCRIBING:
                continue
            if decorated_no_grad(unit) and not enables_gradients(unit):
                decorated.append(unit)
                continue
            if name != "forward" or info is not owner:
                return None
            undecorated_forward = True
    return undecorated_forward


def _name_uses(index: ModuleIndex) -> dict[str, int]:
    """How often each name is used in the file as a plain name (a class's definition counts once)."""
    _read_module_uses(index)
    assert index.name_uses is not None
    return index.name_uses


def _attributes_read_elsewhere(index: ModuleIndex) -> set[str]:
    """Attributes the file reads off objects other than a method's `self` (`model.layers`)."""
    _read_module_uses(index)
    assert index.foreign_reads is not None
    return index.foreign_reads


def _read_module_uses(index: ModuleIndex) -> None:
    """Both of the above, in one walk of the module, when first asked."""
    if index.name_uses is not None and index.foreign_reads is not None:
        return
    selves = {unit.self_name for unit in index.units if unit.self_name}
    uses: dict[str, int] = {}
    reads: set[str] = set()
    for node in walk(index.module_unit.node):
        if type(node) is cst.Name:
            uses[node.value] = uses.get(node.value, 0) + 1
        elif type(node) is cst.Attribute and not (type(node.value) is cst.Name and node.value.value in selves):
            reads.add(node.attr.value)
    index.name_uses, index.foreign_reads = uses, reads


def _names_as_bases(index: ModuleIndex) -> set[str]:
    return {base for info in index.classes.values() for base in info.base_names if base}


def enables_gradients(unit: Unit) -> bool:
    """Whether the function turns gradients on, in a block (`with torch.enable_grad():`), around
    itself (`@torch.enable_grad()`) or from a statement on (`torch.set_grad_enabled(True)`)."""
    node = unit.node
    decorators = [d.decorator for d in node.decorators] if type(node) is cst.FunctionDef else []
    items = [item.item for block, _ in placed(unit, cst.With) for item in block.items]
    switches = [call for call, _ in placed(unit, cst.Call) if callee_name(call) == "set_grad_enabled"]
    return any(grad_mode_of(expr) is True for expr in [*decorators, *items, *switches])


def calls_under_no_grad(index: ModuleIndex, name: str) -> list[bool]:
    """For each call in the file of a function or method so named (`evaluate(...)`,
    `model.inference(...)`), whether it runs under `no_grad` or `inference_mode`: in the block, in
    a function decorated with it, in a Lightning module's evaluation step, or in a function whose
    own calls all run so, up to two callers up (`test_step` calls `self._test_step_with_data(batch)`,
    which calls `self._ensemble(preds)`). The calls are found once per module, when first asked."""
    if index.calls_under_no_grad is None:
        found: dict[str, list[tuple[bool, Unit]]] = {}  # each call's own mode, and the unit it is in
        for unit in index.units:
            quiet = decorated_no_grad(unit) or _lightning_evaluation_step(unit)
            inside = NoGrad(unit).nodes if index.names_no_grad else set()
            for call, _ in placed(unit, cst.Call):
                called = callee_name(call)
                if called is None or _calls_an_imported_class(call, unit, index):
                    continue
                found.setdefault(called, []).append((quiet or id(call) in inside, unit))
        index.calls_in_own_mode = found
        index.calls_under_no_grad = {
            called: [(quiet or _runs_without_grad(found, caller, 2), caller) for quiet, caller in calls]
            for called, calls in found.items()
        }
    return [quiet for quiet, _ in index.calls_under_no_grad.get(name, [])]


def _calls_an_imported_class(call: cst.Call, caller: Unit, index: ModuleIndex) -> bool:
    """`rtn_quantizer.quantize(model)` after `rtn_quantizer = RTNQuantizer(config)`, a class this
    file does not define: the call runs that class's method, none of this file's."""
    func = call.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
        return False
    name = func.value.value
    values = caller.bindings.get(name)  # (most receivers are `self`, a parameter or a module: none)
    if not values or not all(
        type(value) is cst.Call
        and (made := callee_name(value)) is not None
        and made[:1].isupper()
        and made not in index.classes
        for value in values
    ):
        return False
    return all(p.name.value != name for p in caller.params)  # (a parameter: whatever the caller passes)


def callers_quiet_by_their_calls(index: ModuleIndex, name: str) -> list[Unit]:
    """The functions of the file through which a call of `name` is judged to run under `no_grad`
    only because the file's own calls of them do (`predict_sliding_window_return_logits`, whose
    calls here are in an `@torch.inference_mode()` function, calling the helper with the loop):
    what holds for this file's calls, which another module's calls of them may not share."""
    calls_under_no_grad(index, name)
    own = index.calls_in_own_mode or {}
    found: list[Unit] = []

    def up(unit: Unit, depth: int) -> None:
        if depth == 0 or not called_by_its_name(unit) or unit in found:
            return
        found.append(unit)
        for quiet, caller in own.get(unit.name, []):
            if not quiet:
                up(caller, depth - 1)

    for quiet, caller in own.get(name, []):
        if not quiet:
            up(caller, 2)
    return found


def _calls_named(index: ModuleIndex, name: str) -> list[tuple[bool, Unit]]:
    """Each call in the file of a function or method so named: whether it runs under `no_grad`
    (as `calls_under_no_grad` judges it), and the function making it."""
    calls_under_no_grad(index, name)
    assert index.calls_under_no_grad is not None
    return index.calls_under_no_grad.get(name, [])


def callers_with_gradients(index: ModuleIndex, name: str) -> list[Unit]:
    """The functions of the file that call a function or method so named with gradients on (as
    `calls_under_no_grad` judges them), once per call."""
    return [caller for quiet, caller in _calls_named(index, name) if not quiet]


def accepts(method: cst.FunctionDef, call: cst.Call) -> bool:
    """Whether a call on an object fits the method's signature (its first parameter bound to the
    object): `meter.update(loss, n)` cannot run a `TimeMeter.update(self, n=1)`."""
    params = method.params
    named = [*params.posonly_params, *params.params][1:]
    positional = sum(1 for arg in call.args if arg.keyword is None and not arg.star)
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    if any(arg.star for arg in call.args):
        return True  # `update(*values)`: any count
    if positional > len(named) and type(params.star_arg) is not cst.Param:
        return False
    names = {p.name.value for p in [*named, *params.kwonly_params]}
    if not keywords <= names and params.star_kwarg is None:
        return False
    required = [p.name.value for p in [*named[positional:], *params.kwonly_params] if p.default is None]
    return all(name in keywords for name in required)


def callers_of(index: ModuleIndex, name: str) -> list[Unit]:
    """The functions of the file that call a function or method so named, once per call."""
    return [caller for _, caller in _calls_named(index, name)]


def called_by_its_name(unit: Unit) -> bool:
    """A function or method that code calls by its name: not the module body, a lambda, a dunder,
    nor `forward` (`forward` and `__call__` run through the object)."""
    return type(unit.node) is cst.FunctionDef and not unit.name.startswith("__") and unit.name != "forward"


def _runs_without_grad(found: dict[str, list[tuple[bool, Unit]]], unit: Unit, depth: int) -> bool:
    """Whether every call of the function in the file runs under `no_grad`, `depth` callers up."""
    if depth == 0 or not called_by_its_name(unit):
        return False
    calls = found.get(unit.name, [])
    return bool(calls) and all(quiet or _runs_without_grad(found, caller, depth - 1) for quiet, caller in calls)


def _lightning_evaluation_step(unit: Unit) -> bool:
    """`validation_step`, `test_step`, `predict_step` of a module: Lightning runs them without grad."""
    return unit.is_method and unit.name in NO_GRAD_STEP_METHODS and unit.cls is not None and unit.cls.is_module


# Where a stateful metric's base class comes from: torchmetrics, torcheval, and Lightning's
# metrics before torchmetrics (1.0-1.2).
OLD_LIGHTNING_METRICS = "pytorch_lightning.metrics."
METRIC_LIBRARIES = ("torchmetrics.", "torcheval.metrics.", OLD_LIGHTNING_METRICS)


def is_metric_class(classes: dict[str, ClassInfo], cls: ClassInfo) -> bool:
    """A class of the module whose bases reach `torchmetrics.Metric` (or a torcheval metric)."""
    return any((base or "").startswith(METRIC_LIBRARIES) for info in lineage(classes, cls) for base in info.base_names)


def metric_list_states(classes: dict[str, ClassInfo], cls: ClassInfo) -> frozenset[str]:
    """The states that `self.add_state("preds", default=[], dist_reduce_fx="cat")` makes lists."""
    found = set()
    for info in lineage(classes, cls):
        for node in (node for method in info.methods.values() for node in own_nodes(method)):
            if not (type(node) is cst.Call and callee_name(node) == "add_state" and node.args):
                continue
            default = next((a.value for a in node.args if a.keyword and a.keyword.value == "default"), None)
            if default is None and len(node.args) > 1 and node.args[1].keyword is None:
                default = node.args[1].value
            name = string_value(node.args[0].value)
            if type(default) is cst.List and name is not None:
                found.add(name)
    return frozenset(found)


def only_called(tree: cst.CSTNode, name: cst.Name) -> bool:
    """Whether the function that `name` defines is only ever called in `tree`, never handed on
    (returned, stored, registered as a hook): it cannot outlive the code around it."""
    called: set[int] = set()
    uses: list[cst.Name] = []
    for node in walk(tree):
        if type(node) is cst.Call and type(node.func) is cst.Name:
            called.add(id(node.func))
        elif type(node) is cst.Name and node.value == name.value and node is not name:
            uses.append(node)
    return all(id(use) in called for use in uses)
