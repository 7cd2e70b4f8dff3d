"""TL018: a tensor with autograd history assigned to an attribute in code that runs once per batch."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    AttributeWrite,
    Facts,
    Role,
    all_params,
    dotted_name,
    method_call,
    own_nodes,
    through_data,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

# Code that runs once per batch and whose values carry a graph: forward, forward hooks, per-step
# methods. Tensor hooks and backward hooks are given gradients, which carry none.
_REPEATING = (Role.FORWARD, Role.MODULE_HOOK, Role.STEP)
_GIVEN_VALUES = frozenset(["update", "process"])


class GraphKeptOnSelf(Rule):
    """
    ## What it does
    Checks for a tensor that carries autograd history assigned (not appended) to an attribute of
    an object that outlives the call, in code that runs once per batch: `self.last_attn = attn`
    in `forward`, `self.loss = loss` in a `training_step`, `module.features = output` in a
    forward hook, and the methods of `self` they call.

    ## Why is this bad?
    PyTorch's FAQ: a tensor assigned to a member of an object "will not deallocate until the
    object goes out of scope". The attribute keeps the tensor and, through its `grad_fn`, the
    whole autograd graph it was computed from until the next call replaces it. Where nothing
    backpropagates through the value (an evaluation pass not under `torch.no_grad()`, attention
    maps or features kept for visualisation), that graph holds every activation the step saved
    for backward: peak memory grows by roughly one step's activations. The cost is bounded (one
    step's graph, replaced on the next call), not a growth. Measured on CPU by walking the saved
    tensors of the kept graph (not with the verifier, which measures growth): `self.last = h`
    after a 1024-4096-1024 MLP on a batch of 256, with grad on and no `backward()`, keeps 10 MiB
    between calls, 1 MiB for `h` and 9 MiB of saved activations; `h.detach()` keeps 1 MiB.
    [TL001](TL001.md) reports containers that grow, [TL004](TL004.md) attributes that accumulate
    across calls.

    Not reported: a module's mode flag (`self.norm.training = flag`), writes through `.data`
    (`self.alpha.data = t.clamp(min=0)` keeps no history), detached values (`.detach()`, `.item()`, `.cpu().numpy()`), values computed
    under `torch.no_grad()` or `torch.inference_mode()` (a decorated `forward` too), Lightning's
    `validation_step`/`test_step`/`predict_step`, a meter's `update` or a processor's `process`
    (called by code this file may not show, under `no_grad` or not), assignments in `__init__`
    and other code that runs once, attributes deleted or set to `None` later in the same call or set to `None` by
    another method of the class, state that the call reads before it writes it (a streaming cache
    or recurrent state handed to the next call: `x = cat([self.cache, x]); self.cache = x`, whose
    graph chaining is [TL004](TL004.md)'s), optional arguments kept as given (`self.mask = mask`
    for `forward(self, x, mask=None)`: inputs, not activations), the input a `forward` writes its
    output back into and returns (`batch.x = self.conv(batch.x)` in `forward(self, batch)`, as
    GraphGym's layers do: the call's own data, not state), non-tensors (a runner's counters,
    `runner.max_iters - runner.iter`, in a hook that backpropagates `runner.outputs["loss"]`),
    integer indices (`_, idx = torch.topk(scores, k)`, `x.max(dim=1)`; not `torch.max(a, b)`, one
    tensor), parameters and buffers updated in place
    (`self.running_mean.copy_(...)`), gradients in tensor or backward hooks, and slots of
    dicts (`self.cache["h"] = h`).

    ## Example
    ```python
    class Attention(nn.Module):
        def forward(self, x):
            attn = (self.q(x) @ self.k(x).transpose(-2, -1)).softmax(-1)
            self.last_attn = attn  # keeps this step's graph until the next call
            return attn @ self.v(x)
    ```

    Use instead:
    ```python
    class Attention(nn.Module):
        def forward(self, x):
            attn = (self.q(x) @ self.k(x).transpose(-2, -1)).softmax(-1)
            self.last_attn = attn.detach()
            return attn @ self.v(x)
    ```

    ## Fix safety
    The fix assigns `value.detach()`. It is unsafe: code that reads the attribute to
    backpropagate through it (an auxiliary loss that the parent module collects and adds to the
    training loss) stops training the layers that produced it.

    ## References
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [torch.Tensor.detach](https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html)
    """

    code = "TL018"
    default_enabled = False
    fix_availability = "Sometimes"
    name = "graph-kept-on-self"
    summary = "Tensor with autograd history assigned to an attribute once per batch"
    grows_over_a_run = True
    invalid = (
        """
        import torch
        from torch import nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, dim * 3)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
                self.attention_map = attn
                return attn @ v
        """,
    )
    valid = (
        """
        import torch
        from torch import nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.qkv = nn.Linear(dim, dim * 3)
                self.attention_map = None

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
                self.attention_map = attn.detach()
                return attn @ v
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        kept: dict[int, list[AttributeWrite]] = {}  # `self.h, self.c = h, c`: one finding per statement
        for write in facts.attribute_writes:
            if _kept_across_calls(facts, write):
                kept.setdefault(id(write.node), []).append(write)
        for writes in kept.values():
            first = writes[0]
            role = next(r for r in _REPEATING if r in first.unit.roles)
            why = first.unit.roles[role]
            where = f"a hook {why}" if role is Role.MODULE_HOOK else why
            names = ", ".join(f"`{dotted_name(w.target) or w.target.attr.value}`" for w in writes)
            yield Report(
                first.node,
                f"{names} set in {where} keeps the tensor and its autograd graph alive until the next call "
                "replaces it: where nothing backpropagates through it, that is one step's saved activations "
                "(bounded: one step's graph, not a growth); assign `.detach()`",
                _fix(first) if len(writes) == 1 else None,
            )


def _kept_across_calls(facts: Facts, write: AttributeWrite) -> bool:
    """A value with a graph, written once per batch onto an object that outlives the call."""
    role = next((r for r in _REPEATING if r in write.unit.roles), None)
    if role is None or not write.value.graph or write.value.module or write.unit.name == "__init__":
        return False  # (a network, `self.model_wrapped = model`, holds parameters, not a batch's graph)
    if role is Role.STEP and (write.unit.method_unit() or write.unit).name in _GIVEN_VALUES:
        return False  # a meter's `update`, a processor's `process`: what they are given, and when, is unknown
    if role is Role.MODULE_HOOK and "backward" in write.unit.roles[role]:
        return False  # a backward hook is given gradients
    if _optional_argument(write) or write.target.attr.value == "training" or through_data(write.target):
        # (`self.norm.training = flag`: a module's mode, a bool whatever the flag is named;
        # `self.alpha.data = t` copies `t`'s values in, not its history)
        return False
    lifetime, _ = facts.container_kind(write.unit, write.target)
    return lifetime in ("attribute", "global") and not _cleared(write) and not _carried(write)


def _optional_argument(write: AttributeWrite) -> bool:
    """`self.mask = mask` for `forward(self, x, mask=None)`: an optional argument kept as given is
    an input (a mask, labels, a cache), not an activation with a graph."""
    value = write.value_expr
    node = write.unit.node
    if type(value) is not cst.Name or type(node) is not cst.FunctionDef:
        return False
    return any(p.name.value == value.value and p.default is not None for p in all_params(node.params))


def _carried(write: AttributeWrite) -> bool:
    """Read earlier in the same call: state handed from one call to the next (a streaming cache, a
    recurrent state, a running average), which the next call needs; whether its graph chains from
    call to call is TL004's question."""
    name = dotted_name(write.target)
    written: set[int] = set()
    for node in own_nodes(write.unit.node):
        if node is write.node:
            return False
        if type(node) is cst.Assign:
            written.update(id(t.target) for t in node.targets)
        elif type(node) is cst.Attribute and id(node) not in written and dotted_name(node) == name:
            return True
    return False


def _cleared(write: AttributeWrite) -> bool:
    """Deleted or set to None later in the same call, or set to None by another method of the class."""
    name = dotted_name(write.target)
    after = False
    for node in own_nodes(write.unit.node):
        if node is write.node:
            after = True
        elif after and _clears(node, name):
            return True
    method = write.unit.method_unit()
    if method is None or method.cls is None or dotted_name(write.target.value) != method.self_name:
        return False
    assigned = method.cls.attribute_values.get(write.target.attr.value, [])
    return any(
        _is_none(value) and unit.method_unit() not in (method, None) and unit.name != "__init__"
        for value, unit in assigned
    )


def _clears(node: cst.CSTNode, name: str | None) -> bool:
    if type(node) is cst.Del:
        targets = [e.value for e in node.target.elements] if type(node.target) is cst.Tuple else [node.target]
        return any(dotted_name(t) == name for t in targets)
    if type(node) is cst.Assign and _is_none(node.value):
        return any(dotted_name(t.target) == name for t in node.targets)
    return False


def _is_none(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Name and value.value == "None"


def _fix(write: AttributeWrite) -> NodeFix | None:
    """`.detach()` on the assigned value, where it is the whole right-hand side of this statement."""
    value = write.value_expr
    if not isinstance(write.node, (cst.Assign, cst.AnnAssign)) or write.node.value is not value:
        return None  # `self.a, self.b = ...`, or a helper's statement: the author picks what to detach
    described = cst.Module([]).code_for_node(value)
    return NodeFix(f"Assign `{described}.detach()`", Applicability.UNSAFE, ((value, method_call(value, "detach")),))
