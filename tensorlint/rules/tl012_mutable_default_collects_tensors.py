"""TL012: a mutable default argument, or a class-level container, that collects tensors."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import Facts, Store, Unit, bounded_per_call, lineage, self_attribute
from tensorlint.rule import Report, Rule


class MutableDefaultCollectsTensors(Rule):
    """
    ## What it does
    Checks for tensors put into a list, dict or set that Python creates once and shares between
    calls: a parameter's default (`def collect(out, bucket=[])`, `cache={}`, `seen=set()`) or a
    container assigned in a class body (`class Tracker: history = []`) that methods grow through
    `self.history`, `cls.history` or `Tracker.history`. Growth: `append`, `extend`, `insert`,
    `+= [t]`, `d[key] = t` under a key that changes between calls, `d.setdefault(k, []).append(t)`.

    ## Why is this bad?
    A default value is evaluated once, when `def` runs, and every call that does not pass the
    argument gets that same object ([Python tutorial: Default Argument
    Values](https://docs.python.org/3/tutorial/controlflow.html#default-argument-values)). A
    class attribute is one object for the class and all its instances. So a tensor put there is
    kept from every call, for as long as the function or the class exists, and with it the
    autograd graph it carries (the activations it was computed from). PyTorch's FAQ: memory is
    freed only when nothing refers to the tensor any more. Measured with `tensorlint verify` on
    CPU: `extract(model, images)` appending a 64x4096 float32 output to a default list keeps
    1 MiB per call (plus its graph); the twin with `bucket=None` keeps nothing.

    Not reported: defaults the function never grows, or grows with Python values (`.item()`,
    strings, shapes); defaults rebound in the function (`bucket = list(bucket)`, the `None`
    pattern) or emptied in it (`.clear()`, `.pop()`); values the file does not show to be
    tensors (it shows them by a `torch.Tensor` annotation, a torch call, a module's output, or a
    list the code passes to `torch.cat`/`torch.stack`): `def collect(out, bucket=[])` alone is
    bugbear's B006, not this rule; class attributes that `__init__` (or any method) shadows with `self.history = []`,
    annotated class fields of records (dataclass, pydantic, attrs copy them per instance; in a
    plain class, `captured: Dict[str, List[Tensor]] = {}` is one dict, as is a `ClassVar`), tuples and
    constants, and `deque(maxlen=N)`. A container that an instance attribute holds
    (`self.history = []`) is TL001's: TL012 reports only the class-level one.

    ## Example
    ```python
    def extract(model, images, features=[]):
        features.append(model(images))  # one output (and its graph) more every call
        return features
    ```

    Use instead:
    ```python
    def extract(model, images, features=None):
        if features is None:
            features = []
        features.append(model(images))
        return features
    ```

    ## Fix safety
    No automatic fix. The usual fix (flake8-bugbear's B006: `None` and a new container in the
    call) changes what the program does for every caller that relies on the list growing across
    calls, and that is the only reason to read a grown default; a class-level list moved into
    `__init__` stops being shared between instances. Only the author can say which is meant.

    ## References
    - [Python tutorial: Default Argument Values](https://docs.python.org/3/tutorial/controlflow.html#default-argument-values)
    - [Python FAQ: Why are default values shared between objects?](https://docs.python.org/3/faq/programming.html#why-are-default-values-shared-between-objects)
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [flake8-bugbear B006](https://github.com/PyCQA/flake8-bugbear#list-of-warnings), [ruff B006](https://docs.astral.sh/ruff/rules/mutable-argument-default/)
    """

    code = "TL012"
    name = "mutable-default-collects-tensors"
    summary = "Tensor kept in a mutable default argument or a class-level container, shared by every call"
    grows_over_a_run = True
    invalid = (
        """
        import torch

        def extract(model, images, features=[]):
            features.append(model(images))
            return features
        """,
        """
        import torch

        class Tracker:
            history = []

            def record(self, loss: torch.Tensor):
                self.history.append(loss)
        """,
    )
    valid = (
        """
        import torch

        def extract(model, images, features=None):
            if features is None:
                features = []
            features.append(model(images))
            return features
        """,
        """
        import torch

        class Tracker:
            history = []

            def __init__(self):
                self.history = []

            def record(self, loss: torch.Tensor):
                self.history.append(loss.item())
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for store in facts.stores:
            if not store.grows or not store.value.tensor or bounded_per_call(facts, store):
                continue
            default = _default_holder(store)
            holder = default or _class_holder(facts, store)
            if holder is None:
                continue
            what = "a tensor and its autograd graph" if store.value.graph else "a tensor"
            advice = (
                "the function exists; default to `None` and make the container in the call"
                if default
                else "the class exists; make it per instance in `__init__` and bound or clear it"
            )
            yield Report(store.node, f"{holder}: it keeps {what} from every call, for as long as {advice}")


def _container_base(store: Store) -> cst.BaseExpression:
    expr = store.container
    while type(expr) is cst.Subscript:
        expr = expr.value  # `cache[key].append(t)` grows `cache`
    return expr


def _default_holder(store: Store) -> str | None:
    """What the container is, in words, when it is a parameter's default: one object for every call."""
    base = _container_base(store)
    if type(base) is not cst.Name:
        return None
    unit: Unit | None = store.unit
    while unit is not None:
        default = unit.mutable_defaults.get(base.value)
        if default is not None:
            rebound = base.value in unit.bindings  # `bucket = list(bucket)`, `if bucket is None: bucket = []`
            if rebound or base.value in unit.managed_globals:  # `bucket.clear()`: emptied by the call
                return None
            shown = cst.Module([]).code_for_node(default)
            return f"the default `{base.value}={shown}` of `{unit.name}` is made once, when `def` runs"
        if base.value in unit.bindings:
            return None  # a local of this name hides any default further out
        unit = unit.parent
    return None


def _class_holder(facts: Facts, store: Store) -> str | None:
    """What the container is, in words, when a class body defines it: one object for every instance."""
    base = _container_base(store)
    attribute = self_attribute(store.unit, base)
    cls = store.unit.cls if attribute is not None else None
    if type(base) is cst.Attribute and type(base.value) is cst.Name and base.value.value in facts.index.classes:
        cls, attribute = facts.index.classes[base.value.value], base.attr.value  # `Tracker.history.append(t)`
    if cls is None or attribute is None:
        return None
    classes = lineage(facts.index.classes, cls)
    owner = next((c for c in classes if attribute in c.class_containers), None)
    if owner is None or any(attribute in c.attribute_values or attribute in c.managed for c in classes):
        return None  # shadowed per instance (`self.history = []`), or emptied by a method
    if attribute in facts.index.foreign_attributes or attribute in facts.index.foreign_managed:
        return None  # reset or emptied from outside: `Tracker.history = []`, `Tracker.history.clear()`
    return f"`{owner.name}.{attribute}` is a class attribute, one container for the class and every instance"
