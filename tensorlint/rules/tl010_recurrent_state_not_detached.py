"""TL010: recurrent state carried across training batches without `.detach()`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    CarriedState,
    Facts,
    Unit,
    all_params,
    callee_name,
    carried_states,
    own_nodes,
    retain_graph_flag,
    target_names,
    with_first_statement,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

# Calls that make a plain tensor: a state started with one of them can take `.detach()`.
_TENSOR_MAKERS = frozenset(
    ["zeros", "ones", "randn", "rand", "empty", "full", "zeros_like", "ones_like", "randn_like", "empty_like",
     "full_like", "tensor", "new_zeros", "new_ones", "new_empty", "new_full"]
)  # fmt: skip


class RecurrentStateNotDetached(Rule):
    """
    ## What it does
    Checks for recurrent state that a training loop feeds back, batch after batch, into the call
    that computes it, without cutting its autograd history: `out, hidden = model(x, hidden)`,
    `output, (h, c) = self.lstm(x, (h, c))`, `hidden = self.rnn(x, hidden)[1]` or
    `logits, memory = model(x, memory=memory)` in a loop that calls `backward()`, and
    `self.hidden` fed back into `self.rnn` in each call of a Lightning-style `training_step` (or
    of a method that calls `backward()` and that a loop over batches of the class calls:
    `self.learn(x, y)`), and
    state carried across the batches of a loop that never calls `backward()` with gradients on
    (an evaluation over a stream outside `torch.no_grad()`: the graph is never freed), where
    no `hidden = hidden.detach()`, `repackage_hidden(hidden)`, `hidden.detach_()`, `.data` or
    fresh start (`hidden = model.init_hidden(bs)`) comes between one batch and the next.

    ## Why is this bad?
    The state of batch N is computed from the state of batch N-1, so its autograd graph reaches
    back through every batch seen so far. Either `backward()` fails on the second batch
    ("Trying to backward through the graph a second time"; with `retain_graph=True` and an
    optimizer step in between, "modified by an inplace operation"), or, where the error is
    silenced with `retain_graph=True` and no step changes the weights between backward passes
    (gradients accumulated over a stream), every batch's graph and saved activations stay alive
    and each `backward()` walks all of them again: memory and step time grow with the number of
    batches.
    Measured with `tensorlint verify` on CPU (an embedding and a 2-layer LSTM of width 64, batches
    of 32 x 35 tokens, gradients accumulated per batch with `retain_graph=True`): 9.4 MiB
    (9,847,552 bytes) kept per batch, mostly the LSTM's saved workspaces; with the state detached
    at the start of each batch, nothing. PyTorch's FAQ ("Avoid
    running RNNs on sequences that are too large") and its word_language_model example prescribe
    truncated backpropagation through time: detach the hidden state at the start of each batch
    (`repackage_hidden`).

    Not reported: state detached or started afresh anywhere in the iteration (also by an annotated
    assignment, `out: Output = await self.generate(batch)`; also through a
    helper of the same file that calls `.detach()`, or under a condition other than the state's
    own `is None` test), state carried only within one batch (an inner loop over time steps that
    is not a loop over batches, where the function starts the state afresh: the graph should span
    the steps; also an inner loop over the data that one `backward()` after it spans, with the
    state started afresh in the loop around it, once per epoch: backpropagation through the whole
    sequence, by design), loops without `backward()` that are not loops over batches (generation,
    decoding), code under
    `torch.no_grad()`/`inference_mode()`, values that no backpropagated loss is computed from,
    values passed to calls that are not a network (`x = normalize(x)`, `x = x.to(device)`, a
    model's method that moves them, `x = model.to_device(x)`),
    and `self.hidden` that another method (`on_train_batch_start`) or code in the same file
    outside the class resets. State read back from a stored result (`mems = outputs.mems`,
    `loss, mems = ret[0], ret[1:]`) is not followed: models that hand memories back that way
    (Transformer-XL, XLNet) usually detach them themselves; nor is state that `forward` keeps on
    the module across calls, or a detach that a model's own state class implements. When the
    loop also calls `backward(retain_graph=True)`, this rule reports the carried state and TL011
    stays silent.

    ## Example
    ```python
    hidden = model.init_hidden(batch_size)
    for x, y in loader:
        output, hidden = model(x, hidden)
        loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    Use instead:
    ```python
    hidden = model.init_hidden(batch_size)
    for x, y in loader:
        hidden = repackage_hidden(hidden)  # hidden.detach(), or tuple(h.detach() for h in hidden)
        output, hidden = model(x, hidden)
        loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    Where each carried name is started before the loop as a plain tensor (`torch.zeros(...)`,
    `weight.new_zeros(...)`, also unpacked: `h, c = torch.zeros(...), torch.zeros(...)`), the fix
    puts `h, c = h.detach(), c.detach()` first in the loop's body. It is unsafe: gradients then
    stop at the batch boundary, which is what truncated BPTT means but changes what the model
    learns (a learnable initial state gets gradients from the first batch only). Elsewhere the
    rule reports without a fix: whether the state is a tensor, a tuple of tensors (what
    `init_hidden` returns for an LSTM), a model-specific object or `None` before the first batch
    decides how to detach it, and the file rarely shows that.

    ## References
    - [PyTorch FAQ: Avoid running RNNs on sequences that are too large](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [PyTorch examples: word_language_model, `repackage_hidden`](https://github.com/pytorch/examples/blob/main/word_language_model/main.py)
    - [PyTorch forums: LSTM, "Trying to backward through the graph a second time"](https://discuss.pytorch.org/t/solved-training-a-simple-rnn/9055)
    """

    code = "TL010"
    fix_availability = "Sometimes"
    name = "recurrent-state-not-detached"
    summary = "Recurrent state carried across training batches without `.detach()`"
    grows_over_a_run = True
    invalid = (
        """
        import torch

        def train(model, loader, optimizer, criterion, batch_size):
            hidden = model.init_hidden(batch_size)
            for x, y in loader:
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
    )
    valid = (
        """
        import torch

        def repackage_hidden(h):
            if isinstance(h, torch.Tensor):
                return h.detach()
            return tuple(repackage_hidden(v) for v in h)

        def train(model, loader, optimizer, criterion, batch_size):
            hidden = model.init_hidden(batch_size)
            for x, y in loader:
                hidden = repackage_hidden(hidden)
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
        """
        import torch

        def train(model, loader, optimizer, criterion):
            for x, y in loader:
                hidden = None
                outputs = []
                for step in range(x.size(1)):
                    out, hidden = model.cell(x[:, step], hidden)
                    outputs.append(out)
                loss = criterion(torch.stack(outputs, 1), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            for state in carried_states(facts, unit):
                yield Report(state.node, _message(unit, state), _fix(facts, unit, state))


def _message(unit: Unit, state: CarriedState) -> str:
    names = ", ".join(f"`{name}`" for name in state.names)
    statement = cst.Module([]).code_for_node(state.node).strip()
    statement = statement if len(statement) <= 60 else statement[:57] + "..."
    if state.loop is not None:
        per, plural = "batch", "batches"
        kind = "for" if type(state.loop) is cst.For else "while"
        where = f"this `{kind}` loop calls `backward()`"
    else:
        per, plural = "step", "steps"
        where = f"`{unit.name}` runs once per batch"
    if state.loop is not None and not state.backwards:
        where = f"this `{kind}` loop over batches runs with gradients on and never calls `backward()`"
        effect = (
            "its autograd graph, with every batch's saved activations, reaches back through every earlier "
            "batch and nothing ever frees it, so memory grows with the number of batches"
        )
        return (
            f"{names} {'is' if len(state.names) == 1 else 'are'} carried from one batch into the next by "
            f"`{statement}` ({where}): {effect}; run the loop under `torch.no_grad()`, or detach the state "
            "at the start of each batch"
        )
    if any(retain_graph_flag(call) for call in state.backwards):
        effect = (
            f"with `retain_graph=True` every {per}'s graph and saved activations stay alive, so memory and "
            f"backward time grow with every {per}"
        )
    else:
        effect = (
            f"its autograd graph reaches back through every earlier {per}, so memory and backward time grow "
            f"with the number of {plural} (or `backward()` fails on the second one)"
        )
    if len(state.names) == 1:
        name = state.names[0]
        advice = f"`{name} = {name}.detach()`, or `repackage_hidden({name})` for a tuple"
    else:
        advice = f"`{', '.join(state.names)} = {', '.join(f'{n}.detach()' for n in state.names)}`"
    verb = "is" if len(state.names) == 1 else "are"
    return (
        f"{names} {verb} carried from one {per} into the next by `{statement}` and never detached ({where}): "
        f"{effect}; detach at the start of each {per} ({advice})"
    )


def _fix(facts: Facts, unit: Unit, state: CarriedState) -> NodeFix | None:
    """`h, c = h.detach(), c.detach()` first in the loop, where each name is started, before the loop,
    as a plain tensor (`torch.zeros(...)`): a tuple, a model's state object or `None` would not take it."""
    loop = state.loop
    if loop is None or type(loop.body) is not cst.IndentedBlock:
        return None
    if not all(_started_as_tensor(facts, unit, loop, name) for name in state.names):
        return None
    names = ", ".join(state.names)
    statement = cst.parse_statement(f"{names} = {', '.join(f'{name}.detach()' for name in state.names)}\n")
    message = f"Detach `{names}` at the start of each iteration"
    return NodeFix(message, Applicability.UNSAFE, ((loop, with_first_statement(loop, statement)),))


def _started_as_tensor(facts: Facts, unit: Unit, loop: cst.For | cst.While, name: str) -> bool:
    """Whether every assignment of `name` outside the loop makes a tensor (`torch.zeros(...)`,
    `h, c = torch.zeros(...), torch.zeros(...)`), and there is one; parameters are unknown."""
    node = unit.node
    if "." in name or (type(node) is cst.FunctionDef and name in {p.name.value for p in all_params(node.params)}):
        return False
    inside = {id(inner) for inner in own_nodes(loop)}
    starts: list[cst.BaseExpression] = []
    for assign in own_nodes(node):
        if type(assign) is not cst.Assign or id(assign) in inside:
            continue
        for target in assign.targets:
            if name not in target_names(target.target):
                continue
            if type(target.target) is cst.Name:
                starts.append(assign.value)
            elif type(target.target) is cst.Tuple and type(assign.value) is cst.Tuple:
                pairs = zip(target.target.elements, assign.value.elements, strict=False)
                starts.extend(v.value for t, v in pairs if type(t.value) is cst.Name and t.value.value == name)
            else:
                return False
    return bool(starts) and all(_makes_tensor(facts, value) for value in starts)


def _makes_tensor(facts: Facts, value: cst.BaseExpression) -> bool:
    if type(value) is not cst.Call or callee_name(value) not in _TENSOR_MAKERS:
        return False
    qualified = facts.imports.qualify(value.func) or ""
    return qualified.startswith("torch.") or callee_name(value) in ("new_zeros", "new_ones", "new_empty", "new_full")
