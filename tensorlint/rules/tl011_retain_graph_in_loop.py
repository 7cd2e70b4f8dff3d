"""TL011: `backward(retain_graph=True)` in a training loop that never backpropagates through the graph again."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    BACKWARD_CALLS,
    TRAINING_STEPS,
    Accumulation,
    Facts,
    Role,
    Store,
    Unit,
    argument,
    callee_name,
    calls_in,
    carried_names,
    carried_states,
    flowing_into,
    is_loss_name,
    is_training_iteration,
    own_nodes,
    placed,
    receiver,
    references,
    resolve_callable,
    retain_graph_flag,
    root_name,
    without_argument,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

_GRAD = frozenset(["torch.autograd.grad", "torch.autograd.backward"])
# Per-step methods that a training framework calls once per batch and that may backpropagate.


class RetainGraphInLoop(Rule):
    """
    ## What it does
    Checks for `loss.backward(retain_graph=True)`, `torch.autograd.backward(..., retain_graph=True)`,
    `torch.autograd.grad(..., retain_graph=True)`, `accelerator.backward(loss, retain_graph=True)`
    and `self.manual_backward(loss, retain_graph=True)` run once per batch (in a loop over a
    DataLoader, one that calls `next()` or steps an optimizer, or a `training_step`) where nothing
    else in the iteration backpropagates through that graph again.

    ## Why is this bad?
    `retain_graph=True` tells autograd not to free the graph's saved tensors (the activations)
    after the backward pass. PyTorch's documentation of `backward` says: "in nearly all cases
    setting this option to True is not needed and often can be worked around in a much more
    efficient way." The graph then lives as long as anything references it, and the cost
    depends on what does:
    - the loss, the outputs or a value computed from them kept across iterations (`total += loss`,
      `losses.append(loss)`, a carried state): every iteration's activations stay alive, and
      memory grows with the number of batches. Measured with `tensorlint verify` on CPU (an MLP
      512-512-10, batch 64, `total_loss += loss` beside `loss.backward(retain_graph=True)`):
      259 KiB (265,220 bytes) kept per iteration, where the same loop without the flag keeps no
      tensor bytes, only a few autograd nodes on the host (TL004's host-only case);
    - otherwise, the graph lives until `loss` and its outputs are rebound in the next iteration:
      nothing grows (the verifier measures 0 bytes per iteration for that loop), but two
      iterations' activations are alive at the peak instead of one.

    The flag is also how an earlier error ("Trying to backward through the graph a second
    time") is silenced: the real cause is usually a tensor carried from one batch into the next
    without `.detach()`.

    Not reported: a second backward pass in the same iteration, which may go through the same
    graph (`d_loss.backward(retain_graph=True)` then `g_loss.backward()`, two optimizers in one
    `training_step`, `torch.autograd.grad(...)` then `loss.backward()`, the generator's backward
    after the critic's inner loop; also through a helper of the same file or one named for it,
    `self.backward_G()`, or a loss object defined elsewhere whose result the loop does not
    backpropagate, `loss_compute(output, y)`, which may call `backward()` itself), `create_graph=True` (higher-order gradients, gradient penalties),
    `retain_graph` given as anything but `True`, calls outside a loop over batches or inside an
    inner loop over heads or losses of one batch, and losses computed from a graph built before
    the loop (which every iteration backpropagates through again). A loop that feeds recurrent
    state back without detaching it is TL010's: TL010 reports the state, and names the flag.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward(retain_graph=True)
        optimizer.step()
        total_loss += loss
    ```

    Use instead:
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    ```

    ## Fix safety
    The fix removes `retain_graph=True`. It is unsafe: code this rule cannot see (a caller, a
    callback, a hook) may backpropagate through the same graph again, which then raises
    "Trying to backward through the graph a second time".

    ## References
    - [torch.Tensor.backward: `retain_graph`](https://docs.pytorch.org/docs/stable/generated/torch.Tensor.backward.html)
    - [torch.autograd.backward: "in nearly all cases setting this option to True is not needed"](https://docs.pytorch.org/docs/stable/generated/torch.autograd.backward.html)
    - [PyTorch FAQ: Don't accumulate history across your training loop](https://docs.pytorch.org/docs/stable/notes/faq.html)
    """

    code = "TL011"
    fix_availability = "Always"
    name = "retain-graph-in-loop"
    summary = "`backward(retain_graph=True)` once per batch, with no second backward through the graph"
    grows_over_a_run = True
    invalid = (
        """
        import torch

        def train(model, loader, optimizer, criterion):
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward(retain_graph=True)
                optimizer.step()
        """,
    )
    valid = (
        """
        import torch

        def train(generator, discriminator, loader, opt_g, opt_d, criterion):
            for real, _ in loader:
                fake = generator(torch.randn(real.size(0), 100))
                d_loss = criterion(discriminator(fake), torch.zeros(real.size(0)))
                opt_d.zero_grad()
                d_loss.backward(retain_graph=True)
                opt_d.step()
                g_loss = criterion(discriminator(fake), torch.ones(real.size(0)))
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
        """,
        """
        import torch

        def train(model, loader, optimizer, criterion):
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            calls = [(call, place) for call, place in placed(unit, cst.Call) if _backpropagates(facts, call)]
            flagged = [(call, place) for call, place in calls if retain_graph_flag(call) is not None]
            if not flagged:
                continue
            recurrent = {id(call) for state in carried_states(facts, unit) for call in state.backwards}
            for call, place in flagged:
                if id(call) in recurrent or _creates_graph(call):
                    continue  # TL010 reports the carried state; higher-order gradients need the graph
                scope = _iteration(facts, unit, place.loops)
                # A second backward anywhere in the loops around it may go through the same graph
                # (the generator's loss after the critic's inner loop).
                if scope is None or _backpropagates_again(facts, unit, place.loops[0] if place.loops else scope, call):
                    continue
                loop = scope if isinstance(scope, (cst.For, cst.While)) else None
                loss = _loss_names(call)
                if loop is not None and _reaches_earlier_graph(facts, unit, loop, loss):
                    continue  # every iteration backpropagates through a graph built before the loop
                flag = retain_graph_flag(call)
                assert flag is not None
                fix = NodeFix(
                    "Remove `retain_graph=True`", Applicability.UNSAFE, ((call, without_argument(call, flag)),)
                )
                yield Report(call, _message(facts, unit, call, loop, loss), fix)


def _message(facts: Facts, unit: Unit, call: cst.Call, loop: cst.For | cst.While | None, loss: set[str]) -> str:
    others = "..., " if len(call.args) > 1 else ""
    spelled = f"{cst.Module([]).code_for_node(call.func)}({others}retain_graph=True)"
    per = "iteration" if loop is not None else "step"
    keeper = _keeper(facts, unit, loop, loss) if loop is not None else None
    if keeper is not None:
        effect = (
            f", and `{keeper}` keeps them referenced across iterations: every iteration's activations stay "
            "alive and memory grows with every batch"
        )
    else:
        effect = (
            f": they stay alive until the loss is rebound in the next {per}, so two {per}s' activations "
            "are held at the peak"
        )
    return (
        f"`{spelled}` keeps this {per}'s autograd graph and saved activations alive, "
        f"but nothing backpropagates through them again{effect}; drop `retain_graph=True`"
    )


def _creates_graph(call: cst.Call) -> bool:
    flag = argument(call, "create_graph")
    return flag is not None and not (type(flag) is cst.Name and flag.value in ("False", "None"))


def _backpropagates(facts: Facts, call: cst.Call) -> bool:
    """`loss.backward()`, `accelerator.backward(loss)`, `manual_backward`, `torch.autograd.grad`/`backward`."""
    if callee_name(call) in BACKWARD_CALLS:
        return True
    return (facts.imports.qualify(call.func) or "") in _GRAD


def _iteration(facts: Facts, unit: Unit, loops: tuple[cst.For | cst.While, ...]) -> cst.CSTNode | None:
    """What runs once per batch around the call: its innermost loop when that loop is one over batches
    (not over the heads or losses of one batch), or a training step's body; None otherwise."""
    if loops:
        innermost = loops[-1]
        return innermost if is_training_iteration(innermost, unit, facts.imports) else None
    method = unit.method_unit()
    if method is unit and Role.STEP in unit.roles and unit.name in TRAINING_STEPS:
        return unit.node
    return None


def _backpropagates_again(facts: Facts, unit: Unit, scope: cst.CSTNode, call: cst.Call) -> bool:
    """Another backward pass in the iteration: in its own code, in a helper of the file it calls, or
    in a helper named for one (`self.backward_G()`, `model.run_backward(fake)`) defined elsewhere."""
    calls = calls_in(scope)
    backward_calls = [other for other in calls if _backpropagates(facts, other)]
    backpropagated = {name for other in backward_calls for name in _loss_names(other)}
    inside_backward = {id(node) for other in backward_calls for node in own_nodes(other)}
    backward_ids = {id(other) for other in backward_calls}
    for other in calls:
        if other is call:
            continue
        if id(other) in backward_ids or "backward" in (callee_name(other) or "").lower():
            return True
        if _helper_backpropagates(facts, unit, other, 0):
            return True
        if id(other) not in inside_backward and _loss_object_call(facts, unit, other, backpropagated):
            return True
    return False


def _loss_object_call(facts: Facts, unit: Unit, call: cst.Call, backpropagated: set[str]) -> bool:
    """`loss = loss_compute(output, y)`: a loss object defined elsewhere whose result the iteration
    never backpropagates. Such objects (a "loss compute" that also steps) often call `backward()`
    themselves, through the graph the retained one shares."""
    if not is_loss_name(callee_name(call) or "") or not call.args or resolve_callable(facts.index, call.func, unit):
        return False
    for node in own_nodes(unit.node):
        if type(node) is cst.Assign and node.value is call:
            return not {n for target in node.targets for n in references(target.target)} & backpropagated
    return True  # a bare call, or its result used in place: nothing here backpropagates it


def _helper_backpropagates(facts: Facts, unit: Unit, call: cst.Call, depth: int) -> bool:
    if depth > 1:
        return False
    for helper, _, _ in resolve_callable(facts.index, call.func, unit):
        for inner in calls_in(helper.node):
            if _backpropagates(facts, inner) or _helper_backpropagates(facts, helper, inner, depth + 1):
                return True
    return False


def _loss_names(call: cst.Call) -> set[str]:
    """The names of what is backpropagated: `loss` in `loss.backward()` or `accelerator.backward(loss)`."""
    owner = receiver(call)
    if callee_name(call) == "backward" and owner is not None and not any(a.keyword is None for a in call.args):
        return references(owner)
    first = next((arg.value for arg in call.args if arg.keyword is None), None)
    return references(first) if first is not None else set()


def _assigns(loop: cst.For | cst.While) -> list[tuple[set[str], set[str]]]:
    """(names written, names read) for each assignment in the loop's body."""
    flows = []
    for node in own_nodes(loop.body):
        if type(node) is cst.Assign:
            written = {n for target in node.targets for n in references(target.target)}
            flows.append((written, references(node.value)))
        elif type(node) is cst.AugAssign:
            flows.append((references(node.target), references(node.value)))
    return flows


def _sources(loop: cst.For | cst.While, seeds: set[str]) -> set[str]:
    """`seeds` and every name whose value flows into them through the loop's assignments."""
    return flowing_into(_assigns(loop), seeds)


def _reaches_earlier_graph(facts: Facts, unit: Unit, loop: cst.For | cst.While, loss: set[str]) -> bool:
    """Whether the loss is computed from a value with autograd history that the loop does not rebuild:
    `features = encoder(x)` before the loop, backpropagated through again in every iteration."""
    assigned = {name for written, _ in _assigns(loop) for name in written}
    if type(loop) is cst.For:
        assigned |= references(loop.target)
    # Where the loop starts, on any iteration of the loops around it (`targets = encoder(...)`
    # after it, in an outer loop); at the function's end where the walk did not record it.
    env = facts.names_before_loop.get(id(loop)) or facts.names_at_end(unit) or {}
    return any(env[name].graph for name in _sources(loop, loss) - assigned if name in env)


def _keeper(facts: Facts, unit: Unit, loop: cst.For | cst.While, loss: set[str]) -> str | None:
    """What keeps the iteration's graph beyond it: a carried value the loss is computed from, or an
    accumulator or container that a graph of this loop is put into."""
    carried = carried_names(loop) & _sources(loop, loss)
    if carried:
        return sorted(carried)[0]
    events: list[Accumulation | Store] = [*facts.accumulations, *(s for s in facts.stores if s.grows)]
    for event in events:
        around = next((found for found in event.loops if found.node is loop), None)
        if event.unit is not unit or around is None or not event.value.graph or event.reset_this_iteration:
            continue
        name = root_name(event.target if isinstance(event, Accumulation) else event.container)
        if name is not None and name not in around.reset:
            return name
    return None
