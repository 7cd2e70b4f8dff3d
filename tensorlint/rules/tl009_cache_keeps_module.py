"""TL009: `functools.lru_cache`/`cache` on an nn.Module method or on a function of tensors."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tensorlint.analysis import (
    ClassInfo,
    Facts,
    Imports,
    Unit,
    all_params,
    argument,
    attribute_value,
    dotted_name,
    is_dataset_class,
    is_model_name,
    lineage,
    walk,
)
from tensorlint.rule import Report, Rule

_CACHES = frozenset(["functools.lru_cache", "functools.cache", "lru_cache"])


class CacheKeepsModule(Rule):
    """
    ## What it does
    Checks for `functools.lru_cache` and `functools.cache` on methods of `nn.Module` classes
    (including Lightning modules and Hugging Face models, and mixins that the file's modules
    inherit: `class ConvNet(BudgetMixin, nn.Module)`) and on functions that take a tensor
    argument (annotated `torch.Tensor`, or unannotated and used as one: handed to a torch function
    that takes tensors, `torch.max(lengths)`, or read as one, `lengths.unsqueeze(1)`, `lat.device`).

    ## Why is this bad?
    The cache is a dictionary that lives as long as the function, which for a method is as long
    as the class: its keys hold every argument of every cached call, `self` included, and its
    values hold every result. A cached method of a model keeps each model instance it was ever
    called on alive, with its parameters, gradients and optimizer-visible buffers, after the rest
    of the program has dropped it (a model rebuilt per trial or per test never goes away). A
    tensor argument is hashed by identity, so every new tensor is a cache miss that is kept, with
    its graph: up to `maxsize` (128 by default, unbounded for `cache`). flake8-bugbear's B019 and
    pylint's W1518 report the same for methods in general ("can lead to memory leaks", "will keep
    all method args alive indefinitely, including 'self'").

    Also on functions that take a network (annotated `nn.Module`, or unannotated and named for
    one: `model`, `encoder`), and on methods of other classes whose instances hold tensors (`self.features = features`
    for a `features: torch.Tensor`, `self.edges = torch.as_tensor(...)`): the cache keeps every
    instance, and so its tensors, as it keeps a model.

    Not reported: a function given a module's class (`model_type: type[nn.Module]`, called with
    `type(model)`), static methods and class methods, methods of classes that are not modules and
    hold no tensor the file shows, a dataset's method whose cache has an explicit `maxsize`
    (`@lru_cache(maxsize=16)` keeps 16 items of the one dataset the run uses; the
    `__getitem__` of a class with `__len__` is a dataset's by its protocol, whatever its bases),
    module-level functions of Python values (`@lru_cache def causal_mask(n: int)` is bounded by
    the distinct sizes it sees), and `functools.cached_property`, which stores on the instance.

    ## Example
    ```python
    class Detector(nn.Module):
        @lru_cache(maxsize=32)
        def anchors(self, height: int, width: int) -> torch.Tensor:
            return make_grid(height, width)
    ```

    Use instead:
    ```python
    @lru_cache(maxsize=32)
    def make_anchors(height: int, width: int) -> torch.Tensor:
        return make_grid(height, width)

    class Detector(nn.Module):
        def anchors(self, height: int, width: int) -> torch.Tensor:
            return make_anchors(height, width)
    ```

    ## Fix safety
    This rule reports without a fix: moving the cache off the instance (a module-level function,
    or a dictionary attribute of the instance) is a refactoring.

    ## References
    - [flake8-bugbear B019](https://github.com/PyCQA/flake8-bugbear#list-of-warnings) and [ruff `cached-instance-method` (B019)](https://docs.astral.sh/ruff/rules/cached-instance-method/)
    - [pylint `method-cache-max-size-none` (W1518)](https://pylint.readthedocs.io/en/stable/user_guide/messages/warning/method-cache-max-size-none.html)
    - [functools.lru_cache](https://docs.python.org/3/library/functools.html#functools.lru_cache)
    """

    code = "TL009"
    name = "cache-keeps-module"
    summary = "`lru_cache`/`cache` on an nn.Module method or a function of tensors keeps them alive"
    grows_over_a_run = True
    invalid = (
        """
        import functools
        import torch
        from torch import nn

        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Conv2d(256, 4, 1)

            @functools.lru_cache(maxsize=32)
            def anchors(self, height: int, width: int) -> torch.Tensor:
                ys, xs = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
                return torch.stack([xs, ys], -1)
        """,
        """
        from functools import cache
        import torch

        @cache
        def normalised(x: torch.Tensor) -> torch.Tensor:
            return x / x.norm()
        """,
    )
    valid = (
        """
        from functools import lru_cache
        import torch

        @lru_cache(maxsize=8)
        def causal_mask(n: int) -> torch.Tensor:
            return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        """,
        """
        from functools import lru_cache
        import torch
        from torch import nn

        class Rotary(nn.Module):
            @staticmethod
            @lru_cache(maxsize=4)
            def frequencies(dim: int, base: float = 10000.0) -> torch.Tensor:
                return 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for unit in facts.index.units:
            node = unit.node
            if type(node) is not cst.FunctionDef:
                continue
            decorator = _cache_decorator(facts.imports, node)
            if decorator is None:
                continue
            names = {_decorator_name(d.decorator) for d in node.decorators}
            if unit.is_method and unit.cls is not None and not names & {"staticmethod", "classmethod"}:
                method = f"`{unit.cls.name}.{node.name.value}`"
                if unit.cls.is_module or _mixed_into_a_module(facts, unit.cls):
                    yield Report(
                        decorator,
                        f"cache on {method}, a method of a module: the cache keeps "
                        "`self` (the whole model, with its parameters and buffers) and every argument and "
                        "result alive for as long as the class exists; cache a module-level function of the "
                        "Python values instead, or store results on the instance",
                    )
                    continue
                bounded_memo = _bounded(decorator) and _dataset_item(facts, unit.cls, node.name.value)
                held = _tensor_attributes(facts, unit.cls) if not bounded_memo else []
                if held:  # (`lru_cache(maxsize=16)` on a dataset's method: 16 results of the one dataset)
                    shown = ", ".join(f"`self.{name}`" for name in held[:3])
                    yield Report(
                        decorator,
                        f"cache on {method}, a method of a class whose instances hold tensors ({shown}): "
                        "the cache keeps every instance it is called on, with its tensors, and every "
                        "result alive for as long as the class exists; compute it on the instance "
                        "(`functools.cached_property`, or an attribute) instead",
                    )
                    continue
            models = _module_params(facts, unit, node)
            if models:
                shown = ", ".join(f"`{name}`" for name in models)
                yield Report(
                    decorator,
                    f"cache on `{node.name.value}`, which takes the module {shown}: the cache keeps every "
                    "module it is given (with its parameters and buffers) and every result alive for as "
                    "long as the function exists; cache on Python values, or keep the result on the module",
                )
                continue
            tensors = _tensor_params(facts, unit, node)
            if tensors:
                shown = ", ".join(f"`{name}`" for name in tensors)
                yield Report(
                    decorator,
                    f"cache on `{node.name.value}`, which takes tensor {shown}: tensors are cache keys by "
                    "identity, so every new tensor is a miss that the cache keeps, with its graph and "
                    "its result; cache on Python values (shapes, sizes) instead",
                )


def _tensor_attributes(facts: Facts, cls: ClassInfo) -> list[str]:
    """The attributes of `self` that the class's own code sets to tensors."""
    names = sorted({name for c in lineage(facts.index.classes, cls) for name in c.attribute_values})
    return [name for name in names if attribute_value(facts, cls, name).tensor]


def _dataset_item(facts: Facts, cls: ClassInfo, method: str) -> bool:
    """A `Dataset`'s method, or a map-style dataset's `__getitem__` by its protocol (a class with
    `__getitem__` and `__len__`, without the base): a run holds one or two datasets, so a bounded
    cache keeps that many items."""
    if is_dataset_class(facts.index, cls):
        return True
    methods = {name for c in lineage(facts.index.classes, cls) for name in c.methods}
    return method == "__getitem__" and "__len__" in methods


def _bounded(decorator: cst.Decorator) -> bool:
    """`@lru_cache(maxsize=16)`: an explicit number of entries (not `None`)."""
    expr = decorator.decorator
    return type(expr) is cst.Call and type(argument(expr, "maxsize", 0)) is cst.Integer


def _decorator_name(expr: cst.BaseExpression) -> str | None:
    return dotted_name(expr.func if type(expr) is cst.Call else expr)


def _mixed_into_a_module(facts: Facts, cls: ClassInfo) -> bool:
    """A mixin of the file's modules (`class ConvNet(BudgetMixin, nn.Module)`): its methods run on them."""
    return any(other.is_module and cls in lineage(facts.index.classes, other) for other in facts.index.classes.values())


def _cache_decorator(imports: Imports, node: cst.FunctionDef) -> cst.Decorator | None:
    for decorator in node.decorators:
        expr = decorator.decorator
        func = expr.func if type(expr) is cst.Call else expr
        qualified = imports.qualify(func) or dotted_name(func)
        if qualified not in _CACHES:
            continue
        if type(expr) is cst.Call:
            size = argument(expr, "maxsize", 0)
            if type(size) is cst.Integer and size.evaluated_value == 0:
                continue  # maxsize=0 caches nothing
        return decorator
    return None


def _module_params(facts: Facts, unit: Unit, node: cst.FunctionDef) -> list[str]:
    """Parameters that hold a network: annotated `nn.Module`, or unannotated, named for one
    (`model`, `encoder`) and used as one in the body (called, `.parameters()`, handed to a torch
    function); not `model` naming a checkpoint or a tokenizer's model (`encoding_for_model(model)`)."""
    params = unit.argument_params
    found = []
    for param in params:
        name = param.name.value
        if param.annotation is None:
            if param.default is None and is_model_name(name) and _used_as_module(facts, node, name):
                found.append(name)
        elif "Module" in _annotation_names(param) and not _a_class(param):
            found.append(name)
    return found


def _a_class(param: cst.Param) -> bool:
    """`model_type: type[nn.Module]`: a class, which the cache may keep (a few of them), not a module."""
    assert param.annotation is not None
    annotation = param.annotation.annotation
    return type(annotation) is cst.Subscript and dotted_name(annotation.value) in ("type", "Type", "typing.Type")


_MODULE_METHODS = frozenset(["parameters", "named_parameters", "state_dict", "eval", "train", "modules", "cuda"])


def _used_as_module(facts: Facts, node: cst.FunctionDef, name: str) -> bool:
    for call in walk(node.body):
        if type(call) is not cst.Call:
            continue
        func = call.func
        if type(func) is cst.Name and func.value == name:
            return True  # `encoder(text)`
        if (
            type(func) is cst.Attribute
            and type(func.value) is cst.Name
            and func.value.value == name
            and func.attr.value in _MODULE_METHODS
        ):
            return True  # `model.parameters()`
        qualified = facts.imports.qualify(func) or ""
        given = any(type(a.value) is cst.Name and a.value.value == name for a in call.args)
        if given and qualified.startswith("torch."):
            return True  # `torch.compile(model)`
    return False


def _tensor_params(facts: Facts, unit: Unit, node: cst.FunctionDef) -> list[str]:
    """Parameters annotated as tensors, or unannotated and used as one in the body."""
    found = []
    params = all_params(node.params)
    if unit.is_method and params:
        params = params[1:]
    for param in params:
        words = _annotation_names(param)
        if any(word.endswith("Tensor") for word in words) or (not words and _used_as_tensor(facts, node, param)):
            found.append(param.name.value)
    return found


# torch functions that take a tensor (a number or an array raises), and methods and attributes
# that only tensors have: `torch.max(lengths)`, `torch.deg2rad(lat)`, `lengths.unsqueeze(1)`.
_TENSOR_FUNCTIONS = frozenset(
    ["abs", "cos", "sin", "tan", "exp", "log", "log1p", "sqrt", "rsqrt", "deg2rad", "rad2deg", "sigmoid", "tanh",
     "relu", "softmax", "log_softmax", "max", "min", "sum", "mean", "std", "var", "norm", "clamp", "clip", "where",
     "matmul", "mm", "bmm", "cat", "stack", "flatten", "reshape", "cumsum", "argmax", "argmin", "sort", "topk",
     "unique", "gather", "bincount", "nonzero", "isnan", "isfinite", "outer", "cdist", "diag", "triu", "tril",
     "flip", "roll", "transpose", "permute", "squeeze", "unsqueeze", "chunk", "split", "masked_fill"]
)  # fmt: skip
_TENSOR_METHODS = frozenset(
    ["unsqueeze", "dim", "numel", "float", "long", "half", "cuda", "detach", "permute", "masked_fill", "contiguous",
     "new_zeros", "new_ones", "new_full", "type_as", "size"]
)  # fmt: skip
_TENSOR_ATTRIBUTES = frozenset(["device", "is_cuda", "requires_grad", "grad_fn"])


def _used_as_tensor(facts: Facts, node: cst.FunctionDef, param: cst.Param) -> bool:
    name = param.name.value
    for inner in walk(node.body):
        if _attribute_of(inner, name) in _TENSOR_ATTRIBUTES:
            return True
        if type(inner) is not cst.Call:
            continue
        if _attribute_of(inner.func, name) in _TENSOR_METHODS:
            return True
        first = inner.args[0].value if inner.args and inner.args[0].keyword is None else None
        namespace, _, function = (facts.imports.qualify(inner.func) or "").rpartition(".")
        takes_tensors = (namespace == "torch" and function in _TENSOR_FUNCTIONS) or namespace == "torch.nn.functional"
        if takes_tensors and type(first) is cst.Name and first.value == name:
            return True
    return False


def _attribute_of(node: cst.CSTNode, name: str) -> str | None:
    """`attr` of `name.attr`."""
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:
        return node.attr.value
    return None


def _annotation_names(param: cst.Param) -> set[str]:
    """The names an annotation reads: `Optional[torch.Tensor]` -> Optional, torch, Tensor."""
    if param.annotation is None:
        return set()
    annotation = param.annotation.annotation
    return {n.value for n in [annotation, *walk(annotation)] if type(n) is cst.Name}
