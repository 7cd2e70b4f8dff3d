"""Meaning-preserving rewrites of the rule fixtures, for the metamorphic tests (test_metamorphic.py).

A rewrite must not change whether the code leaks, so the analysis must give a rewritten fixture the
verdict it gives the original: a positive stays reported with the same code on the statement's new
line, a hard negative stays silent. The `# expect:` markers are trailing comments, so they travel
with the statement they end: the expected verdict is read again from the rewritten text.

A transformation returns None where it does not apply (nothing to rewrite); such pairs are not
counted. Run as a script for the invariance table that docs/ quotes:

    .venv/bin/python -m tests.metamorphic
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path

import libcst as cst
from libcst.metadata import (
    Access,
    Assignment,
    BaseAssignment,
    ClassScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    Scope,
    ScopeProvider,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers, also when run as a script

from helpers import FIXTURES, MARKER, fixture_codes, leak_rule_fixtures, markers
from tensorlint.analysis.index import HOOKED_MODULE_NAMES, is_step_method
from tensorlint.analysis.names import class_word
from tensorlint.analysis.syntax import concatenated_operand
from tensorlint.engine import lint_source

LINT_FILENAME = "<string>"  # not a file: imports resolve to nothing in the project (fixtures are self-contained)

Swap = Mapping[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]


# ---------------------------------------------------------------------------------------------
# Fixtures: parsed and analysed once, shared by every rewrite (LibCST trees are immutable)


@dataclass(eq=False)
class Fixture:
    name: str  # relative to fixtures/: "TL001/pos_feature_cache_in_forward.py"
    source: str

    @cached_property
    def module(self) -> cst.Module:
        return cst.parse_module(self.source)

    @cached_property
    def nodes(self) -> tuple[cst.CSTNode, ...]:
        """Every node, in source order."""
        return tuple(_walk(self.module))

    @cached_property
    def order(self) -> Mapping[cst.CSTNode, int]:
        return {node: i for i, node in enumerate(self.nodes)}

    @cached_property
    def parents(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        return {child: node for node in self.nodes for child in _children(node)}

    @cached_property
    def scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        return MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(ScopeProvider)

    @cached_property
    def accesses(self) -> Mapping[cst.CSTNode, Access]:
        """For each name that reads a binding, the scope analysis' record of what it reads."""
        return {access.node: access for scope in _all_scopes(self) for access in scope.accesses}

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every word of the file: what a new name must not collide with."""
        return frozenset(re.findall(r"\w+", self.source))

    @cached_property
    def strings(self) -> frozenset[str]:
        """String literals that spell an identifier (`getattr(self, "name")`, `__all__`)."""
        values = {n.evaluated_value for n in self.nodes if isinstance(n, cst.SimpleString)}
        return frozenset(v for v in values if isinstance(v, str) and v.isidentifier())

    @cached_property
    def marked_statements(self) -> tuple[cst.BaseStatement, ...]:
        """The innermost statement around each `# expect:` comment (a def's, for one on its header or decorator)."""
        found: list[cst.BaseStatement] = []
        for node in self.nodes:
            if isinstance(node, cst.Comment) and MARKER.search(node.value):
                statement = self.enclosing(node, (cst.BaseStatement,))
                if isinstance(statement, cst.BaseStatement) and statement not in found:
                    found.append(statement)
        return tuple(found)

    def enclosing(self, node: cst.CSTNode, kinds: tuple[type[cst.CSTNode], ...]) -> cst.CSTNode | None:
        """The nearest ancestor that is one of `kinds`."""
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, kinds):
                return node
        return None


def _bound(assignment: BaseAssignment) -> cst.CSTNode | None:
    """The node that makes a binding (a target, a def, a parameter, an import); None for a builtin."""
    return assignment.node if isinstance(assignment, Assignment) else None


def _all_scopes(fixture: Fixture) -> set[Scope]:
    return {s for s in fixture.scopes.values() if s is not None}


@cache
def rule_fixtures() -> tuple[Fixture, ...]:
    """fixtures/TLnnn/{pos,neg}_*.py of every rule a plain run enables, and of the opt-in leak rules."""
    return tuple(
        Fixture(p.relative_to(FIXTURES).as_posix(), p.read_text(encoding="utf-8")) for p in leak_rule_fixtures()
    )


def findings(source: str, fixture: str) -> set[tuple[int, str]]:
    """(row, code) of what the analysis reports, with the codes the fixture's folder selects (a plain
    run's, and an opt-in rule's own); a text it cannot parse shows as code "error"."""
    codes = fixture_codes(fixture)
    return {(f.location.row, f.code or "error") for f in lint_source(source, LINT_FILENAME, codes=codes)}


# ---------------------------------------------------------------------------------------------
# Tree plumbing


@cache
def _child_fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """A node's children, read from its fields (LibCST's `children` property visits the node: slow)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, tuple | list):
            yield from (item for item in value if isinstance(item, cst.CSTNode))


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node and its descendants, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(_children(current))))


def _swapped(fixture: Fixture, swap: Swap) -> cst.Module | None:
    """The module with each node of `swap` replaced by its function of that node (called after the
    node's own descendants were replaced). Only the paths from the root to those nodes are rebuilt;
    a LibCST transformer would copy the whole tree for every rewrite."""
    if not swap:
        return None
    dirty: set[cst.CSTNode] = set()
    for node in swap:
        current: cst.CSTNode | None = node
        while current is not None and current not in dirty:
            dirty.add(current)
            current = fixture.parents.get(current)
    module = _rebuild(fixture.module, swap, dirty)
    assert isinstance(module, cst.Module)
    return module


def _rebuild(node: cst.CSTNode, swap: Swap, dirty: set[cst.CSTNode]) -> cst.CSTNode:
    changes: dict[str, object] = {}
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode) and value in dirty:
            changes[name] = _rebuild(value, swap, dirty)
        elif isinstance(value, tuple | list) and any(isinstance(i, cst.CSTNode) and i in dirty for i in value):
            items: list[object] = []
            for item in value:
                new = _rebuild(item, swap, dirty) if isinstance(item, cst.CSTNode) and item in dirty else item
                items += new.nodes if isinstance(new, cst.FlattenSentinel) else [new]
            changes[name] = type(value)(items)
    updated = node.with_changes(**changes) if changes else node
    rewrite = swap.get(node)
    return rewrite(updated) if rewrite is not None else updated


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _fresh(fixture: Fixture, base: str, taken: set[str]) -> str:
    """`base`, else `base_2`, `base_3`, ...: the first that no word of the file and no earlier pick uses."""
    name, number = base, 1
    while name in fixture.identifiers or name in taken:
        number += 1
        name = f"{base}_{number}"
    taken.add(name)
    return name


def _split_docstring(body: Sequence[cst.BaseStatement]) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]]:
    first = body[0] if body else None
    if (
        isinstance(first, cst.SimpleStatementLine)
        and isinstance(first.body[0], cst.Expr)
        and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    ):
        return [first], list(body[1:])
    return [], list(body)


def _block(statements: Sequence[cst.BaseStatement]) -> cst.IndentedBlock:
    return cst.IndentedBlock(body=list(statements))


def _replace_with(node: cst.CSTNode) -> Callable[[cst.CSTNode], cst.CSTNode]:
    return lambda _: node


# ---------------------------------------------------------------------------------------------
# Transformations


Rewrite = Callable[[Fixture], cst.Module | None]


@dataclass(frozen=True)
class Transformation:
    name: str
    rewrite: Rewrite = field(repr=False)

    @property
    def summary(self) -> str:
        """The first paragraph of the rewrite's docstring, for the table."""
        return " ".join((self.rewrite.__doc__ or "").strip().split("\n\n")[0].split())

    def apply(self, fixture: Fixture) -> str | None:
        """The rewritten source, or None where the transformation does not apply (changes nothing)."""
        rewritten = self.rewrite(fixture)
        if rewritten is None:
            return None
        code = rewritten.code
        return None if code == fixture.source else code


# --- 1. renaming ---------------------------------------------------------------------------------

# Functions and methods that a framework (PyTorch, Lightning, HF, torchmetrics, meters) calls by
# name, or with keyword arguments: renaming them or their parameters changes what runs.
_FRAMEWORK_NAMES = frozenset(
    ["forward", "training_step", "validation_step", "test_step", "predict_step", "train_step", "compute_loss",
     "prediction_step", "evaluate", "update", "compute", "reset", "process", "step", "zero_grad", "state_dict",
     "load_state_dict", "extra_repr", "reset_parameters", "train", "eval", "setup", "teardown", "prepare_data",
     "collate_fn", "worker_init_fn", "transfer_batch_to_device", "backward", "generate"]
)  # fmt: skip
_FRAMEWORK_PATTERN = re.compile(r"^(on_|configure_)|_(step|dataloader|epoch_end|epoch_start|step_end|batch_end)$")
# nn.Module's private methods that subclasses override.
_MODULE_OVERRIDES = frozenset(["_load_from_state_dict", "_save_to_state_dict", "_apply", "_call_impl", "_get_name"])
# Words the analysis reads in names, by design: it has no types, so `criterion`, `val_loader` or
# `text_encoder` is its evidence of what a value is (values.py is_loss_name / is_model_name,
# syntax.py's data words, the forward-like method prefixes, TL006's model words and retried
# methods, index.py's per-step method words, flow.py's label-like key words, names.py's words for
# a normaliser's statistics, TL001's device words, values.py's input and index words). Renaming such a
# name to a neutral one removes that evidence, which is not meaning-preserving for a static tool;
# no single affix keeps all of it (`data_*` and `*_data`, `forward_*` and `*_model`), so these
# names keep theirs. Keep the lists in step with the analysis: a rename that fails because the
# analysis reads a new word belongs here, not in KNOWN_GAPS.
_EVIDENCE_WORDS = (  # anywhere in the name
    "loss", "criterion", "entropy", "model", "net", "module", "encode", "decode", "backbone", "generat",
    "discriminator", "teacher", "student", "policy", "critic", "actor", "classifier", "transformer", "vae", "pipe",
    "loader", "iter", "itr", "batches", "data", "optim", "opt", "scaler", "collate", "worker_init", "forward",
    "extract_feat", "layer", "level", "stage", "block", "head", "scale", "oom", "out_of_memory", "predict",
    "sample", "infer", "trainset", "valset", "testset", "devset", "evalset", "feat", "emb", "hidden", "latent",
    "repr", "acc", "correct", "device", "cuda", "moments", "rms", "meanstd", "meanvar", "normaliz", "normalis",
    "rescal", "standardiz", "whiten", "tokenizer", "perplexity",
)  # fmt: skip
_EVIDENCE_PARTS = frozenset(  # as one of the name's `_`-separated parts
    ["step", "batch", "name", "key", "k", "tag", "label", "metric", "stat", "field", "kind", "mode", "type",
     "split", "phase", "prefix", "set", "ds", "dl", "log", "logs", "logging", "info", "infos", "eval", "evaluate",
     "evaluation", "val", "valid", "validate", "validation", "test", "score", "outputs", "size", "input", "inputs",
     "images", "index", "indices", "idx", "ids", "stats", "reward", "rewards", "updates", "steps", "id", "uid", "uuid", "path", "file", "filename", "ppl",
     "tot", "total"]
)  # fmt: skip


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _framework_name(name: str) -> bool:
    return _is_dunder(name) or name in _FRAMEWORK_NAMES or bool(_FRAMEWORK_PATTERN.search(name))


def _is_evidence(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _EVIDENCE_WORDS) or bool(_EVIDENCE_PARTS & set(lowered.split("_")))


@dataclass
class _RenamePlan:
    """New names, decided once per binding (a scope and a name), and the name nodes to rewrite."""

    fixture: Fixture
    renames: dict[cst.CSTNode, str] = field(default_factory=dict)
    decided: dict[tuple[Scope, str], str | None] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    @cached_property
    def keywords(self) -> frozenset[str]:
        """Names passed as keyword arguments anywhere (`partial(hook, name=...)`): parameters keep them."""
        return frozenset(n.keyword.value for n in self.fixture.nodes if isinstance(n, cst.Arg) and n.keyword)

    @cached_property
    def classes(self) -> dict[str, cst.ClassDef]:
        return {n.name.value: n for n in self.fixture.nodes if isinstance(n, cst.ClassDef)}

    @cached_property
    def named_for_classes(self) -> frozenset[str]:
        """Names of objects named for a class of the file (`tracker`, `val_tracker` for
        `EmbeddingTracker`, a container `meters` for `AverageMeter`), and those classes: the
        analysis takes such an object for an instance of the class (`tracker.update(x)`) by
        design, so both keep their names."""
        words: dict[str, set[str]] = {}
        for name in self.classes:
            words.setdefault(class_word(name), set()).add(name)

        def word(name: str) -> str | None:
            last = name.lower().rsplit("_", 1)[-1]
            return next((w for w in (last, last.removesuffix("s")) if w in words), None)

        objects = {name for name in self.fixture.identifiers if word(name) is not None}
        return frozenset(objects.union(*(words[word(name) or ""] for name in objects)))

    def decide(self, scope: Scope, name: str) -> str | None:
        key = (scope, name)
        if key not in self.decided:
            self.decided[key] = self._new_name(scope, name) if self._renamable(scope, name) else None
        return self.decided[key]

    def _new_name(self, scope: Scope, name: str) -> str:
        """A neutral name: `v3` for a variable or parameter, `fn3` for a function, `Class3` for a class;
        a leading underscore (privacy) is kept."""
        nodes = [_bound(a) for a in scope.assignments if a.name == name]
        if isinstance(scope, ClassScope):
            base = "method"
        elif all(isinstance(n, cst.ClassDef) for n in nodes):
            base = "Class"
        elif all(isinstance(n, cst.FunctionDef) for n in nodes):
            base = "fn"
        else:
            base = "v"
        prefix = "_" if name.startswith("_") else ""
        number = len(self.taken) + 1
        # Past the fixture's own names and those given already: a number skipped once would
        # otherwise come round again, and two bindings would share one name.
        while f"{prefix}{base}{number}" in self.fixture.identifiers | self.taken:
            number += 1
        new = f"{prefix}{base}{number}"
        self.taken.add(new)
        return new

    def _renamable(self, scope: Scope, name: str) -> bool:
        assignments = [a for a in scope.assignments if a.name == name]
        if not assignments or name == "_" or name in ("self", "cls") or _is_dunder(name):
            return False
        if _is_evidence(name) or name in self.fixture.strings or name in self.named_for_classes:
            return False
        if any(type(a) is not Assignment for a in assignments):
            return False  # imported names keep theirs
        if any(not isinstance(r.node, cst.Name) for a in assignments for r in a.references):
            return False  # read in a string annotation
        nodes = [_bound(a) for a in assignments]
        if isinstance(scope, ClassScope):  # class attributes are read by name (HF's `config_class`)
            return all(isinstance(n, cst.FunctionDef) for n in nodes) and self._method_renamable(scope, name)
        if any(isinstance(n, cst.FunctionDef) for n in nodes) and _framework_name(name):
            return False
        return all(self._param_renamable(n) for n in nodes if isinstance(n, cst.Param))

    def _param_renamable(self, param: cst.Param) -> bool:
        if param.name.value in self.keywords:
            return False
        function = self.fixture.enclosing(param, (cst.FunctionDef, cst.Lambda))
        if not isinstance(function, cst.FunctionDef):
            return True  # lambdas are called positionally (hooks, callbacks)
        if _framework_name(function.name.value) or function.name.value.startswith("test_"):
            return False  # HF calls `forward(input_ids=...)`; pytest injects fixtures by name
        if any("fixture" in _code(d) for d in function.decorators):
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        if isinstance(self.fixture.enclosing(function, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
            if positional[:1] == [param]:
                return False  # self, cls
            positional = positional[1:]
        # `(module, inp, out)`: a module hook registered in another module is known by its
        # parameters' names (`_assign_unseen_hook_roles`), evidence by design
        return not (len(positional) in (3, 4) and positional[0].name.value.lstrip("_") in HOOKED_MODULE_NAMES)

    def _method_renamable(self, scope: ClassScope, name: str) -> bool:
        """A method keeps its name unless the file reads `.name` only on instances of its class.

        In a class with a library base, only private helpers are renamed: a public method may be an
        override that the library calls by name.
        """
        cls = scope.node
        assert isinstance(cls, cst.ClassDef)
        if _framework_name(name) or name in _MODULE_OVERRIDES:
            return False
        if self._library_based(cls, frozenset()) and not name.startswith("_"):
            return False
        defining = [c for c in self.classes.values() if name in _method_names(c)]
        if defining != [cls]:
            return False
        instances = self._instance_params(cls)
        for node in self.fixture.nodes:
            if isinstance(node, cst.Attribute) and node.attr.value == name:
                access = self.fixture.accesses.get(node.value)
                if access is None or not access.referents or any(_bound(a) not in instances for a in access.referents):
                    return False
        return True

    def _library_based(self, cls: cst.ClassDef, seen: frozenset[str]) -> bool:
        """Whether a base of the class, or of a local base, is not defined in the file."""
        for base in cls.bases:
            if base.keyword is not None:
                continue
            name = base.value.value if isinstance(base.value, cst.Name) else None
            if name == "object":
                continue
            local = self.classes.get(name) if name is not None and name not in seen else None
            if local is None or self._library_based(local, seen | {cls.name.value}):
                return True
        return False

    def _instance_params(self, cls: cst.ClassDef) -> set[cst.CSTNode]:
        """The first parameter of each method of the class and of the file's subclasses of it."""
        family = [c for c in self.classes.values() if c is cls or self._inherits(c, cls, frozenset())]
        params: set[cst.CSTNode] = set()
        for member in family:
            for statement in member.body.body:
                if isinstance(statement, cst.FunctionDef):
                    positional = [*statement.params.posonly_params, *statement.params.params]
                    params.update(positional[:1])
        return params

    def _inherits(self, cls: cst.ClassDef, base: cst.ClassDef, seen: frozenset[str]) -> bool:
        for arg in cls.bases:
            if isinstance(arg.value, cst.Name) and arg.value.value not in seen:
                local = self.classes.get(arg.value.value)
                if local is base or (local is not None and self._inherits(local, base, seen | {cls.name.value})):
                    return True
        return False


def _method_names(cls: cst.ClassDef) -> set[str]:
    return {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}


def _binding_name(node: cst.CSTNode | None) -> cst.Name | None:
    """The name node that a binding writes: a target, a def's or class's name, a parameter's."""
    if isinstance(node, cst.Name):
        return node
    if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Param):
        return node.name
    return None


def rename_defined_names(fixture: Fixture) -> cst.Module | None:
    """Neutral names (`v3`, `fn4`, `Class5`) for the file's own variables, parameters, functions, classes and methods.

    Bindings are renamed through LibCST's scope analysis, so shadowing, closures, `global` and
    `nonlocal` resolve as before; a method's name changes with every `self.method` that reads it.
    Left alone: imported names, dunders, `self`/`cls`, names a framework calls by name or with
    keywords (`forward`, `training_step`, a meter's `update`, Lightning's `on_*`) and their
    parameters, parameters passed by keyword anywhere in the file, class attributes, public
    methods of classes with a library base, methods read on other objects than their instance,
    names spelled in strings, names that carry a word the analysis takes as evidence by
    design (`_EVIDENCE_WORDS`, `_EVIDENCE_PARTS`: `loss`, `criterion`, `model`, `loader`, `key`,
    `log`), and an object named for a class of the file with that class (`tracker` and
    `EmbeddingTracker`: the name is the evidence of its class).
    Renaming those to neutral names would remove evidence, not spelling; every other name of the
    file gets a neutral one, so that no word the analysis might have learned survives.
    """
    plan = _RenamePlan(fixture)
    for scope in sorted(_all_scopes(fixture), key=lambda s: _scope_order(fixture, s)):
        for assignment in sorted(scope.assignments, key=lambda a: a.name):
            new = plan.decide(scope, assignment.name)
            target = _binding_name(_bound(assignment))
            if new is None or target is None:
                continue
            plan.renames[target] = new
            plan.renames.update({reference.node: new for reference in assignment.references})
            if isinstance(scope, ClassScope):  # `self.method`: attributes, not scope accesses
                plan.renames.update(
                    {
                        n.attr: new
                        for n in fixture.nodes
                        if isinstance(n, cst.Attribute) and n.attr.value == assignment.name
                    }
                )
    for node in fixture.nodes:  # `global x` / `nonlocal x` name the binding they share
        if isinstance(node, cst.Global | cst.Nonlocal):
            for item in node.names:
                owner = _declaring_scope(fixture.scopes.get(node), item.name.value, isinstance(node, cst.Global))
                new = plan.decide(owner, item.name.value) if owner is not None else None
                if new is not None:
                    plan.renames[item.name] = new
    return _swapped(fixture, {node: _renamed(new) for node, new in plan.renames.items()})


def _scope_order(fixture: Fixture, scope: Scope) -> int:
    """Scopes in source order, so that the neutral names number the same way on every run."""
    return fixture.order.get(getattr(scope, "node", fixture.module), 0)


def _renamed(new: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def rename(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Name)
        return node.with_changes(value=new)

    return rename


def _declaring_scope(scope: Scope | None, name: str, is_global: bool) -> Scope | None:
    """The scope that holds the binding a `global` / `nonlocal` statement refers to."""
    if scope is None:
        return None
    if is_global:
        return scope.globals
    parent = scope.parent
    while parent is not None and not isinstance(parent, GlobalScope):
        if isinstance(parent, FunctionScope) and any(a.name == name for a in parent.assignments):
            return parent
        parent = parent.parent
    return None


# --- 2. import spellings ---------------------------------------------------------------------------

# Submodules that `from a import b` and `import a.b` bind to the same module object.
_SUBMODULES = frozenset(
    ["torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.parallel", "torch.nn.utils", "torch.optim",
     "torch.optim.lr_scheduler", "torch.utils", "torch.utils.data", "torch.utils.checkpoint", "torch.distributed",
     "torch.cuda", "torch.cuda.amp", "torch.amp", "torch.autograd", "torch.multiprocessing", "torch.func",
     "torch.fx", "torchvision.models", "torchvision.transforms", "torchvision.datasets"]
)  # fmt: skip


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def _module_name(dotted: str) -> cst.Attribute | cst.Name:
    expression = _expression(dotted)
    assert isinstance(expression, cst.Attribute | cst.Name)
    return expression


def _import_reads(fixture: Fixture, alias: cst.ImportAlias) -> list[cst.CSTNode] | None:
    """The names that read what an import alias binds; None if one is not a plain name (a string annotation)."""
    statement = fixture.parents[alias]
    scope = fixture.scopes.get(statement)
    if scope is None:
        return None
    bound = alias.evaluated_alias or alias.evaluated_name
    reads: list[cst.CSTNode] = []
    for assignment in scope.assignments:
        if assignment.name == bound and _bound(assignment) is statement:
            for reference in assignment.references:
                if not isinstance(reference.node, cst.Name):
                    return None
                reads.append(reference.node)
    return reads


def _one_import(line: cst.CSTNode) -> cst.Import | cst.ImportFrom | None:
    """The import of a statement line that holds only it (absolute, not `*`)."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    node = line.body[0]
    if isinstance(node, cst.Import):
        return node
    if isinstance(node, cst.ImportFrom) and not node.relative and node.module is not None:
        return None if isinstance(node.names, cst.ImportStar) else node
    return None


def _split_line(
    line: cst.SimpleStatementLine, smalls: Sequence[cst.BaseSmallStatement]
) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """One statement line becomes several; the first keeps the comments above it."""
    lines = [
        line.with_changes(body=[small], leading_lines=line.leading_lines if i == 0 else ())
        for i, small in enumerate(smalls)
    ]
    return lambda _: cst.FlattenSentinel(lines)  # type: ignore[return-value]


def alias_torch_import(fixture: Fixture) -> cst.Module | None:
    """`import torch` -> `import torch as T`, every read of `torch` rewritten to `T`: the same module object."""
    alias_name = _fresh(fixture, "T", set())
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    for node in fixture.nodes:
        if not isinstance(node, cst.Import):
            continue
        for alias in node.names:
            if alias.asname is None and _dotted(alias.name) == "torch":
                reads = _import_reads(fixture, alias)
                if reads is None:
                    return None
                swap[alias] = _replace_with(alias.with_changes(asname=cst.AsName(name=cst.Name(alias_name))))
                swap.update({read: _renamed(alias_name) for read in reads})
    return _swapped(fixture, swap)


def from_import_submodules(fixture: Fixture) -> cst.Module | None:
    """`import torch.nn as nn` -> `from torch import nn`; `import torch.nn.functional as F` ->
    `from torch.nn import functional as F`: both bind the submodule itself."""
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    for line in fixture.nodes:
        node = _one_import(line)
        if not isinstance(node, cst.Import) or len(node.names) != 1:
            continue
        alias = node.names[0]
        dotted = _dotted(alias.name)
        if alias.asname is None or dotted not in _SUBMODULES:
            continue
        package, _, last = dotted.rpartition(".")
        bound = str(alias.evaluated_alias)
        asname = None if bound == last else cst.AsName(name=cst.Name(bound))
        names = [cst.ImportAlias(name=cst.Name(last), asname=asname)]
        swap[node] = _replace_with(cst.ImportFrom(module=_module_name(package), names=names))
    return _swapped(fixture, swap)


def import_submodules_as(fixture: Fixture) -> cst.Module | None:
    """`from torch import nn` -> `import torch.nn as nn`; `from torch.nn import functional as F` ->
    `import torch.nn.functional as F`; the other names of the same `from` import stay in it."""
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    for line in fixture.nodes:
        node = _one_import(line)
        if not isinstance(node, cst.ImportFrom) or node.module is None or isinstance(node.names, cst.ImportStar):
            continue
        package = _dotted(node.module)
        modules = [a for a in node.names if f"{package}.{a.evaluated_name}" in _SUBMODULES]
        if not modules:
            continue
        others = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in node.names if a not in modules]
        smalls: list[cst.BaseSmallStatement] = [node.with_changes(names=others)] if others else []
        for alias in modules:
            full = _module_name(f"{package}.{alias.evaluated_name}")
            bound = cst.AsName(name=cst.Name(str(alias.evaluated_alias or alias.evaluated_name)))
            smalls.append(cst.Import(names=[cst.ImportAlias(name=full, asname=bound)]))
        assert isinstance(line, cst.SimpleStatementLine)
        swap[line] = _split_line(line, smalls)
    return _swapped(fixture, swap)


def spell_out_submodules(fixture: Fixture) -> cst.Module | None:
    """`import torch.nn.functional as F` (or `from torch.nn import functional as F`) -> `import
    torch.nn.functional`, every `F.x` read as `torch.nn.functional.x`: the same module, by its full name.

    Applies only where the name `torch` is free or bound by imports, so that the new import binds
    nothing that was not the torch package before.
    """
    if any(
        a.name == "torch" and not isinstance(_bound(a), cst.Import) for s in _all_scopes(fixture) for a in s.assignments
    ):
        return None
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    for line in fixture.module.body:
        node = _one_import(line)
        if node is None:
            continue
        spelled = _torch_submodule_aliases(node)
        if not spelled:
            continue
        for alias, dotted in spelled:
            reads = _import_reads(fixture, alias)
            if reads is None:
                return None
            swap.update({read: _replace_with(_module_name(dotted)) for read in reads})
        assert isinstance(line, cst.SimpleStatementLine) and not isinstance(node.names, cst.ImportStar)
        kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in node.names if a not in dict(spelled)]
        smalls: list[cst.BaseSmallStatement] = [node.with_changes(names=kept)] if kept else []
        smalls += [cst.Import(names=[cst.ImportAlias(name=_module_name(dotted))]) for _, dotted in spelled]
        swap[line] = _split_line(line, smalls)
    return _swapped(fixture, swap)


def _torch_submodule_aliases(node: cst.Import | cst.ImportFrom) -> list[tuple[cst.ImportAlias, str]]:
    """The aliases of an import that bind a torch submodule under a short name, with its full name."""
    if isinstance(node, cst.Import):
        found = [(a, str(_dotted(a.name))) for a in node.names if a.asname and _dotted(a.name) in _SUBMODULES]
    else:
        assert node.module is not None and not isinstance(node.names, cst.ImportStar)
        package = _dotted(node.module)
        found = [(a, f"{package}.{a.evaluated_name}") for a in node.names]
        found = [(a, dotted) for a, dotted in found if dotted in _SUBMODULES]
    return [(a, dotted) for a, dotted in found if dotted.startswith("torch.")]


# --- 3. `append` spelled differently ---------------------------------------------------------------


def _statement_append(node: cst.CSTNode) -> tuple[cst.Call, cst.Attribute, cst.Arg] | None:
    """`xs.append(x)` as a whole statement, with one positional argument: the call, its `xs.append`, `x`."""
    if not isinstance(node, cst.Expr) or not isinstance(node.value, cst.Call):
        return None
    call = node.value
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value != "append" or len(call.args) != 1:
        return None
    arg = call.args[0]
    return None if arg.keyword is not None or arg.star else (call, call.func, arg)


def _rewrite_appends(
    fixture: Fixture, rewrite: Callable[[cst.Call, cst.Attribute, cst.Arg], cst.BaseSmallStatement]
) -> dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]:
    """Every statement-level `xs.append(x)`, to be rewritten by `rewrite(call, xs.append, x)`."""

    def rewritten(node: cst.CSTNode) -> cst.CSTNode:
        found = _statement_append(node)
        assert found is not None
        return rewrite(*found)

    return {node: rewritten for node in fixture.nodes if _statement_append(node) is not None}


def _declaration_for(fixture: Fixture, statement: cst.CSTNode, name: cst.Name) -> str | None:
    """What `name += ...` needs so as not to make `name` local: "", "global", "nonlocal"; None if unsure."""
    owner = fixture.enclosing(statement, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    if owner is None:
        return ""  # module level: `+=` rebinds the global itself
    access = fixture.accesses.get(name)
    if not isinstance(owner, cst.FunctionDef) or access is None or not access.referents:
        return None
    scopes = {a.scope for a in access.referents}
    if scopes == {fixture.scopes.get(statement)}:
        return ""
    if len(scopes) != 1:
        return None
    (scope,) = scopes
    return "global" if isinstance(scope, GlobalScope) else "nonlocal" if isinstance(scope, FunctionScope) else None


def _declare(declarations: Sequence[tuple[str, str]]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """`global x` / `nonlocal x` first in a function's body (after its docstring)."""

    def declare(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
        head, rest = _split_docstring(node.body.body)
        lines = [cst.parse_statement(f"{kind} {name}\n") for kind, name in sorted(set(declarations))]
        return node.with_changes(body=node.body.with_changes(body=[*head, *lines, *rest]))

    return declare


def append_to_iadd(fixture: Fixture) -> cst.Module | None:
    """`xs.append(x)` -> `xs += [x]`: a list's `+=` extends it in place, the same object.

    Where `xs` is a global or a closure variable, the function gains `global xs` / `nonlocal xs`,
    since `+=` would otherwise make it local. Receivers that `+=` cannot target (a call's result,
    `d.setdefault(k, []).append(x)`) are left alone.
    """
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    declarations: dict[cst.CSTNode, list[tuple[str, str]]] = {}
    for node in fixture.nodes:
        found = _statement_append(node)
        if found is None or not isinstance(found[1].value, cst.Name | cst.Attribute | cst.Subscript):
            continue
        target = found[1].value
        if isinstance(target, cst.Name):
            kind = _declaration_for(fixture, node, target)
            if kind is None:
                continue
            if kind:
                function = fixture.enclosing(node, (cst.FunctionDef,))
                assert function is not None
                declarations.setdefault(function, []).append((kind, target.value))
        swap[node] = _as_iadd
    swap.update({function: _declare(names) for function, names in declarations.items()})
    return _swapped(fixture, swap)


def _as_iadd(node: cst.CSTNode) -> cst.CSTNode:
    found = _statement_append(node)
    assert found is not None
    _, method, arg = found
    target = method.value
    assert isinstance(target, cst.Name | cst.Attribute | cst.Subscript)
    return cst.AugAssign(target=target, operator=cst.AddAssign(), value=cst.List([cst.Element(arg.value)]))


def append_to_extend(fixture: Fixture) -> cst.Module | None:
    """`xs.append(x)` -> `xs.extend([x])`: extending by a one-item list appends that item."""

    def extend(call: cst.Call, method: cst.Attribute, arg: cst.Arg) -> cst.BaseSmallStatement:
        one = arg.with_changes(value=cst.List([cst.Element(arg.value)]))
        return cst.Expr(call.with_changes(func=method.with_changes(attr=cst.Name("extend")), args=[one]))

    return _swapped(fixture, _rewrite_appends(fixture, extend))


# --- 4. statements inside blocks that run their body once, unchanged -------------------------------

Wrap = Callable[[Sequence[cst.BaseStatement]], cst.BaseCompoundStatement]


def _wrapped(fixture: Fixture, wrap: Wrap) -> dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]:
    """Wrap each marked statement; in a file without markers (a hard negative), every function's body.

    A negative has no statement of interest: wrapping whole bodies moves what bounds it (a
    `clear()`, a `no_grad` block, a `detach()`) along with its stores, in the same order.
    """
    if markers(fixture.source):
        return {
            statement: _wrap_statement(wrap)
            for statement in fixture.marked_statements
            if isinstance(fixture.parents.get(statement), cst.IndentedBlock | cst.Module)  # not an `elif`
        }
    return {
        node: _wrap_body(wrap)
        for node in fixture.nodes
        if isinstance(node, cst.FunctionDef)
        and isinstance(node.body, cst.IndentedBlock)
        and _split_docstring(node.body.body)[1]
    }


def _wrap_statement(wrap: Wrap) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def rewrite(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement)
        return wrap([node.with_changes(leading_lines=())]).with_changes(leading_lines=node.leading_lines)

    return rewrite


def _wrap_body(wrap: Wrap) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def rewrite(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
        docstring, rest = _split_docstring(node.body.body)
        return node.with_changes(body=node.body.with_changes(body=[*docstring, wrap(rest)]))

    return rewrite


def _in_if_true(statements: Sequence[cst.BaseStatement]) -> cst.BaseCompoundStatement:
    return cst.If(test=cst.Name("True"), body=_block(statements))


def _in_nullcontext(statements: Sequence[cst.BaseStatement]) -> cst.BaseCompoundStatement:
    return cst.With(items=[cst.WithItem(_expression("contextlib.nullcontext()"))], body=_block(statements))


def _in_try_reraise(statements: Sequence[cst.BaseStatement]) -> cst.BaseCompoundStatement:
    reraise = _block([cst.SimpleStatementLine(body=[cst.Raise()])])
    return cst.Try(body=_block(statements), handlers=[cst.ExceptHandler(body=reraise, type=cst.Name("KeyError"))])


def wrap_in_if_true(fixture: Fixture) -> cst.Module | None:
    """Marked statements (in a negative, function bodies) inside `if True:`, which always runs them."""
    return _swapped(fixture, _wrapped(fixture, _in_if_true))


def wrap_in_nullcontext(fixture: Fixture) -> cst.Module | None:
    """Marked statements (in a negative, function bodies) inside `with contextlib.nullcontext():`,
    a context manager that does nothing (`import contextlib` added)."""
    swap = _wrapped(fixture, _in_nullcontext)
    if swap:
        swap[fixture.module] = _with_import("contextlib")
    return _swapped(fixture, swap)


def wrap_in_try_reraise(fixture: Fixture) -> cst.Module | None:
    """Marked statements (in a negative, function bodies) inside `try: ... except KeyError: raise`,
    which runs the same statements and lets the same exceptions leave."""
    return _swapped(fixture, _wrapped(fixture, _in_try_reraise))


def _with_import(module_name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """`import module_name` after the module's docstring and `from __future__` imports."""

    def add(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Module)
        index = _after_preamble(node.body)
        statement = cst.parse_statement(f"import {module_name}\n")
        return node.with_changes(body=[*node.body[:index], statement, *node.body[index:]])

    return add


def _after_preamble(body: Sequence[cst.BaseStatement]) -> int:
    """The index after the module docstring and the `from __future__` imports."""
    index = len(_split_docstring(body)[0])
    while index < len(body) and _imports_only(body[index], future=True):
        index += 1
    return index


def _after_imports(body: Sequence[cst.BaseStatement]) -> int:
    """The index after the docstring and the imports that open the module."""
    index = _after_preamble(body)
    while index < len(body) and _imports_only(body[index], future=False):
        index += 1
    return index


def _imports_only(statement: cst.BaseStatement, future: bool) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    if future:
        return all(
            isinstance(s, cst.ImportFrom) and _dotted(s.module or cst.Name("_")) == "__future__" for s in statement.body
        )
    return all(isinstance(s, cst.Import | cst.ImportFrom) for s in statement.body)


# --- 5. a marked store extracted into a helper -----------------------------------------------------

# The codes whose findings are stores into a container: a statement marked for another reason
# (TL006's call retried in a handler, that happens to append) is not extracted.
_STORE_CODES = frozenset(["TL001", "TL002", "TL004", "TL007", "TL018"])
# TL004 reports the call in the loop, not the helper (the fixtures' `meter.update(loss)`); an
# accumulation across calls of forward or a per-step method stays in the helper, which runs as often.
# TL007 reports the call in the `except` block: the helper only sees a parameter, the handler
# knows it is the caught exception.
_AT_CALL_IN_METHOD_FORM = frozenset(["TL004", "TL007"])
_STORE_METHODS = frozenset(["append", "appendleft", "add", "extend", "extendleft", "insert", "update"])


def _marker_comment(codes: Sequence[str]) -> cst.TrailingWhitespace:
    if not codes:
        return cst.TrailingWhitespace()
    comment = cst.Comment(f"# expect: {','.join(sorted(codes))}")
    return cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=comment)


def _line_codes(line: cst.SimpleStatementLine) -> list[str]:
    comment = line.trailing_whitespace.comment
    match = MARKER.search(comment.value) if comment is not None else None
    return [code.strip() for code in match["codes"].split(",")] if match else []


def _marked_stores(fixture: Fixture) -> list[cst.SimpleStatementLine]:
    """Marked one-line statements that store: `c.append(v)` (or another filling method), `c[k] = v`,
    `o.a = v`, `c[k] += v`, and that hold no yield, await or walrus (which a helper would change)."""
    stores: list[cst.SimpleStatementLine] = []
    for statement in fixture.marked_statements:
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        codes = _line_codes(statement)
        if not codes or not set(codes) <= _STORE_CODES or "\n" in _code(statement.body[0]):
            continue
        if any(isinstance(n, cst.Yield | cst.Await | cst.NamedExpr) for n in _walk(statement)):
            continue
        if _store_call(statement.body[0]) is not None or _store_target(statement.body[0]) is not None:
            stores.append(statement)
    return stores


def _store_call(small: cst.BaseSmallStatement) -> cst.Call | None:
    """`container.append(value)` or another container-filling method, as a statement."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _STORE_METHODS and call.args:
            return None if any(arg.star for arg in call.args) else call
    return None


def _store_target(small: cst.BaseSmallStatement) -> cst.Subscript | cst.Attribute | None:
    """The one target of `c[k] = v`, `c[k] += v`, `o.a = v`, `o.a += v` (a single index, no slice)."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
    elif isinstance(small, cst.AugAssign):
        target = small.target
    else:
        return None
    if isinstance(target, cst.Attribute):
        return target
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        return target
    return None


def _free_locals(fixture: Fixture, statement: cst.CSTNode) -> list[str]:
    """The function variables (its own or an enclosing function's) that a statement reads, in order."""
    inside = set(_walk(statement))
    names: list[str] = []
    for node in _walk(statement):
        access = fixture.accesses.get(node)
        if access is None or not isinstance(node, cst.Name) or node.value in names:
            continue
        if any(isinstance(a.scope, FunctionScope) and _bound(a) not in inside for a in access.referents):
            names.append(node.value)
    return names


def _call_line(
    statement: cst.SimpleStatementLine, call: cst.BaseExpression, codes: Sequence[str]
) -> Callable[[cst.CSTNode], cst.CSTNode]:
    return _replace_with(statement.with_changes(body=[cst.Expr(call)], trailing_whitespace=_marker_comment(codes)))


def _over_data(fixture: Fixture, statement: cst.CSTNode) -> bool:
    """A loop around the statement, in its function, iterates data (a loader), not a record's fields."""
    loop = fixture.enclosing(statement, (cst.For, cst.While, cst.FunctionDef))
    while isinstance(loop, (cst.For, cst.While)):
        iterated = cst.Module([]).code_for_node(loop.iter).lower() if isinstance(loop, cst.For) else ""
        if any(word in iterated for word in ("loader", "data", "batch")):
            return True
        loop = fixture.enclosing(loop, (cst.For, cst.While, cst.FunctionDef))
    return False


def extract_store_to_method(fixture: Fixture) -> cst.Module | None:
    """A marked store in a method moves, verbatim, into a new method of its class: `self.maps.append(attn)`
    -> `self._keep(attn)`, with `def _keep(self, attn): self.maps.append(attn)`.

    The helper receives the variables of the method that the statement reads, so it stores the same
    objects into the same container. The marker stays on the storing statement in the helper (the
    code that runs in forward, a hook or a handler, as TL003 reports CUDA work in a `__getitem__`
    helper), except TL004's in a loop (of a method not run per step by its name), TL001's in a loop
    over data (device outputs kept across the loop's batches) and TL007's, which move to the call
    (`_AT_CALL_IN_METHOD_FORM`).
    """
    taken: set[str] = set()
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    helpers: dict[cst.CSTNode, list[cst.FunctionDef]] = {}
    for statement in _marked_stores(fixture):
        method = fixture.enclosing(statement, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
        cls = fixture.enclosing(method, (cst.ClassDef, cst.FunctionDef)) if method is not None else None
        if not isinstance(method, cst.FunctionDef) or not isinstance(cls, cst.ClassDef):
            continue
        positional = [*method.params.posonly_params, *method.params.params]
        if not positional or any(_dotted(d.decorator) in ("staticmethod", "classmethod") for d in method.decorators):
            continue
        instance = positional[0].name.value
        params = [name for name in _free_locals(fixture, statement) if name != instance]
        name = _fresh(fixture, "_keep", taken)
        codes = _line_codes(statement)
        loop = fixture.enclosing(statement, (cst.For, cst.While, cst.FunctionDef))
        in_loop = isinstance(loop, (cst.For, cst.While))
        # A method that runs once per step (an EMA's `update`) passes that to its helper, which is
        # judged where it stores: its loop over parameters is not what the history crosses; one
        # over micro-batches, each backpropagated in it, is.
        per_step = is_step_method(method.name.value) or method.name.value == "forward"
        in_loop = in_loop and not (per_step and not _backpropagates(loop))
        at_call = [c for c in codes if c in _AT_CALL_IN_METHOD_FORM and (in_loop or c == "TL007")]
        if in_loop and "TL001" in codes and _over_data(fixture, statement):
            at_call.append("TL001")  # outputs kept across a loop over data: judged in that loop, at the call
        moved = statement.with_changes(
            leading_lines=(), trailing_whitespace=_marker_comment([c for c in codes if c not in at_call])
        )
        helper = cst.ensure_type(
            cst.parse_statement(f"def {name}({', '.join([instance, *params])}):\n    pass\n"), cst.FunctionDef
        )
        helpers.setdefault(cls, []).append(
            helper.with_changes(body=_block([moved]), leading_lines=[cst.EmptyLine(indent=False)])
        )
        swap[statement] = _call_line(statement, _expression(f"{instance}.{name}({', '.join(params)})"), at_call)
    for cls, methods in helpers.items():
        swap[cls] = _with_methods(methods)
    return _swapped(fixture, swap)


def _backpropagates(loop: cst.CSTNode | None) -> bool:
    """Whether a loop's body calls `backward()`: each iteration is a (micro-)batch."""
    return loop is not None and any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"
        for node in _walk(loop)
    )


def _with_methods(methods: Sequence[cst.FunctionDef]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    def add(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.ClassDef)
        return node.with_changes(body=node.body.with_changes(body=[*node.body.body, *methods]))

    return add


def extract_store_to_function(fixture: Fixture) -> cst.Module | None:
    """A marked store becomes a call of a new module-level function that takes the container and the value:
    `self.maps.append(attn)` -> `_keep(self.maps, attn)`, with `def _keep(container, value): container.append(value)`.

    `o.a = v` passes the owner (`owner.a = value`), `c[k] = v` the container and the key. An
    assignment evaluates its value first, a call its arguments in order: the rewrite applies only
    where the container and key are read without calls, so that the order cannot matter.

    The marker moves to the call, for every code: the helper stores whatever it is given into
    whatever it is given, so only the call, which passes the long-lived container and the tensor
    (the closure, the exception), holds the leak, and a helper called from a clean place and a
    leaky one must be reported for the leaky call. The fixtures set this for TL004
    (`record(history, loss)` in TL004/pos_helper_appends_to_history.py).
    """
    taken: set[str] = set()
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    helpers: list[cst.FunctionDef] = []
    for statement in _marked_stores(fixture):
        if fixture.enclosing(statement, (cst.FunctionDef,)) is None:
            continue
        extracted = _function_form(statement.body[0])
        if extracted is None:
            continue
        params, stored, args = extracted
        name = _fresh(fixture, "_keep", taken)
        helper = cst.ensure_type(cst.parse_statement(f"def {name}({', '.join(params)}):\n    pass\n"), cst.FunctionDef)
        empty = cst.EmptyLine(indent=False)
        body = _block([cst.SimpleStatementLine(body=[stored])])
        helpers.append(helper.with_changes(body=body, leading_lines=[empty, empty]))
        swap[statement] = _call_line(statement, cst.Call(func=cst.Name(name), args=args), _line_codes(statement))
    if helpers:
        swap[fixture.module] = _with_functions(helpers)
    return _swapped(fixture, swap)


def _function_form(small: cst.BaseSmallStatement) -> tuple[list[str], cst.BaseSmallStatement, list[cst.Arg]] | None:
    """The helper's parameters and storing statement, and the call's arguments; None where the order
    of evaluation would change."""
    call = _store_call(small)
    if call is not None:
        return _call_form(call)
    target = _store_target(small)
    assert target is not None and isinstance(small, cst.Assign | cst.AugAssign)
    if isinstance(small, cst.Assign) and any(isinstance(n, cst.Call | cst.Await | cst.Yield) for n in _walk(target)):
        return None  # `c[k] = v` evaluates v first; `_keep(c, k, v)` evaluates c and k first
    if isinstance(target, cst.Attribute):
        if target.attr.value.startswith("__") and not _is_dunder(target.attr.value):
            return None  # `self.__x` is name-mangled in its class only
        params, values = ["owner", "value"], [target.value, small.value]
        new_target: cst.BaseAssignTargetExpression = target.with_changes(value=cst.Name("owner"))
    else:
        index = target.slice[0].slice
        assert isinstance(index, cst.Index)
        params, values = ["container", "key", "value"], [target.value, index.value, small.value]
        new_target = cst.Subscript(cst.Name("container"), [cst.SubscriptElement(cst.Index(cst.Name("key")))])
    stored: cst.BaseSmallStatement
    if isinstance(small, cst.Assign):
        stored = cst.Assign([cst.AssignTarget(new_target)], cst.Name("value"))
    else:
        stored = cst.AugAssign(new_target, small.operator, cst.Name("value"))
    return params, stored, [cst.Arg(v) for v in values]


def _call_form(call: cst.Call) -> tuple[list[str], cst.BaseSmallStatement, list[cst.Arg]]:
    """`c.append(v)` -> `def _keep(container, value): container.append(value)`, called as `_keep(c, v)`."""
    assert isinstance(call.func, cst.Attribute)
    positional = [a for a in call.args if a.keyword is None]
    values = ["value"] if len(positional) == 1 else [f"value_{i}" for i in range(1, len(positional) + 1)]
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    inner = [cst.Arg(cst.Name(v)) for v in values] + [cst.Arg(cst.Name(k), keyword=cst.Name(k)) for k in keywords]
    stored = cst.Expr(cst.Call(func=cst.Attribute(cst.Name("container"), call.func.attr), args=inner))
    args = [cst.Arg(call.func.value), *(a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args)]
    return ["container", *values, *keywords], stored, args


def _with_functions(functions: Sequence[cst.FunctionDef]) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """The functions after the imports that open the module: defined before any statement can call them."""

    def add(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Module)
        index = _after_imports(node.body)
        return node.with_changes(body=[*node.body[:index], *functions, *node.body[index:]])

    return add


# --- 8. the appended value wrapped -----------------------------------------------------------------


def wrap_appended_in_tuple(fixture: Fixture) -> cst.Module | None:
    """`xs.append(x)` -> `xs.append((x,))`: the list keeps the tuple, the tuple keeps `x`, as long as before.

    What stays alive does not change; what a reader of the list gets does (a tuple): this preserves
    the leak verdict, not the program's output.
    """

    def in_tuple(call: cst.Call, method: cst.Attribute, arg: cst.Arg) -> cst.BaseSmallStatement:
        return cst.Expr(call.with_changes(args=[arg.with_changes(value=cst.Tuple([cst.Element(arg.value)]))]))

    return _swapped(fixture, _rewrite_appends(fixture, in_tuple))


def wrap_appended_in_dict(fixture: Fixture) -> cst.Module | None:
    """`xs.append(x)` -> `xs.append({"x": x})`: the dict keeps `x` as long as the list keeps the dict.

    The key is the value's name, as people write it (`{"loss": loss}`), else "value". Like the
    tuple, this preserves what stays alive, not what a reader of the list gets.
    """

    def in_dict(call: cst.Call, method: cst.Attribute, arg: cst.Arg) -> cst.BaseSmallStatement:
        key = arg.value.value if isinstance(arg.value, cst.Name) else "value"
        record = cst.Dict([cst.DictElement(cst.SimpleString(f'"{key}"'), arg.value)])
        return cst.Expr(call.with_changes(args=[arg.with_changes(value=record)]))

    return _swapped(fixture, _rewrite_appends(fixture, in_dict))


# --- 9. a forward store moved into a hook ---------------------------------------------------------


@dataclass(frozen=True)
class _HookSite:
    """A marked store in `forward` of the value a submodule returns: `h = self.fc(x)` then
    `self.cache.append(h)`, which a forward hook on `self.fc` does just as well, at the same moment."""

    cls: cst.ClassDef
    forward: cst.FunctionDef
    init: cst.FunctionDef
    store: cst.SimpleStatementLine
    instance: str  # `self`
    value: str  # `h`
    submodule: str  # `fc`


def _hook_sites(fixture: Fixture) -> list[_HookSite]:
    """One site per class at most: the first marked TL001 store that a hook can take over."""
    sites: dict[cst.ClassDef, _HookSite] = {}
    for store in _marked_stores(fixture):
        forward = fixture.enclosing(store, (cst.FunctionDef, cst.ClassDef))
        cls = fixture.enclosing(forward, (cst.ClassDef, cst.FunctionDef)) if forward is not None else None
        if (
            _line_codes(store) != ["TL001"]
            or not isinstance(forward, cst.FunctionDef)
            or forward.name.value != "forward"
        ):
            continue
        if not isinstance(cls, cst.ClassDef) or cls in sites or fixture.parents.get(store) is not forward.body:
            continue
        init = next((m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "__init__"), None)
        positional = [*forward.params.posonly_params, *forward.params.params]
        if init is None or not positional:
            continue
        instance = positional[0].name.value
        read = [name for name in _free_locals(fixture, store) if name != instance]
        if len(read) != 1:
            continue
        submodule = _submodule_output(forward, store, instance, read[0])
        if submodule is not None:
            sites[cls] = _HookSite(cls, forward, init, store, instance, read[0], submodule)
    return list(sites.values())


def _submodule_output(forward: cst.FunctionDef, store: cst.CSTNode, instance: str, value: str) -> str | None:
    """`fc` when `value` is bound once in forward, before the store, to `self.fc(...)`, and `self.fc`
    is called nowhere else in forward (the hook must fire exactly when the store ran)."""
    statements = list(forward.body.body)
    bindings = [
        (i, line.body[0])
        for i, line in enumerate(statements)
        if isinstance(line, cst.SimpleStatementLine)
        and isinstance(line.body[0], cst.Assign)
        and value in {_dotted(t.target) for t in line.body[0].targets}
    ]
    every_binding = [
        n for n in _walk(forward) if isinstance(n, cst.Name) and n.value == value and _is_target(forward, n)
    ]
    if len(bindings) != 1 or len(every_binding) != 1 or bindings[0][0] >= statements.index(store):  # type: ignore[arg-type]
        return None
    call = bindings[0][1].value
    func = call.func if isinstance(call, cst.Call) else None
    if not (isinstance(func, cst.Attribute) and _dotted(func.value) == instance):
        return None
    name = func.attr.value
    calls = [n for n in _walk(forward) if isinstance(n, cst.Call) and _dotted(n.func) == f"{instance}.{name}"]
    return name if len(calls) == 1 else None


def _is_target(scope: cst.CSTNode, name: cst.Name) -> bool:
    """Whether `name` is bound (assigned, looped over, a parameter) somewhere in `scope`."""
    for node in _walk(scope):
        if isinstance(node, cst.AssignTarget | cst.AugAssign | cst.For | cst.Param | cst.AnnAssign):
            target = node.name if isinstance(node, cst.Param) else node.target
            if name in set(_walk(target)) | {target}:
                return True
    return False


class _Renamed(cst.CSTTransformer):
    """Names read in a statement replaced by expressions: `self` -> `self.owner`, `h` -> `output`."""

    def __init__(self, names: Mapping[str, str]) -> None:
        super().__init__()
        self.names = names

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False  # a keyword's name is not a variable

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(value=original_node.value.visit(self))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        new = self.names.get(original_node.value)
        return _expression(new) if new is not None else updated_node


def _moved_into_hook(
    fixture: Fixture, hook: Callable[[_HookSite, set[str]], tuple[str, list[cst.CSTNode], bool]]
) -> cst.Module | None:
    """Each site's store leaves forward; `__init__` ends by registering what `hook` makes (its
    registration expression, the definitions it needs, whether they go in the class or the module)."""
    taken: set[str] = set()
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    module_definitions: list[cst.CSTNode] = []
    for site in _hook_sites(fixture):
        registration, definitions, in_class = hook(site, taken)
        line = cst.parse_statement(f"{site.instance}.{site.submodule}.register_forward_hook({registration})\n")
        init_body = list(site.init.body.body)
        swap[site.init] = _replace_with(
            site.init.with_changes(body=site.init.body.with_changes(body=[*init_body, line]))
        )
        kept = [s for s in site.forward.body.body if s is not site.store]
        swap[site.forward] = _replace_with(site.forward.with_changes(body=site.forward.body.with_changes(body=kept)))
        if in_class:
            swap[site.cls] = _with_methods([cst.ensure_type(d, cst.FunctionDef) for d in definitions])
        else:
            module_definitions += definitions
    if module_definitions:
        swap[fixture.module] = _with_functions(module_definitions)  # type: ignore[arg-type]
    return _swapped(fixture, swap)


def _hook_statement(site: _HookSite, names: Mapping[str, str]) -> cst.SimpleStatementLine:
    moved = cst.ensure_type(site.store.visit(_Renamed(names)), cst.SimpleStatementLine)
    return moved.with_changes(leading_lines=())


def _hook_names(fixture: Fixture, taken: set[str]) -> tuple[str, str, str]:
    return _fresh(fixture, "module", taken), _fresh(fixture, "inputs", taken), _fresh(fixture, "output", taken)


def store_in_hook_factory(fixture: Fixture) -> cst.Module | None:
    """A store in forward of what a submodule returned moves into a forward hook on that submodule,
    made by a method of the class: `self.fc.register_forward_hook(self._make_hook())` in `__init__`,
    with `def _make_hook(self): def hook(module, inputs, output): self.cache.append(output); return hook`.

    The hook runs when `self.fc` returns, once per forward (the transformation applies only where
    forward calls it once and binds its output once): the same objects are kept at the same moment.
    """

    def factory(site: _HookSite, taken: set[str]) -> tuple[str, list[cst.CSTNode], bool]:
        maker, hook = _fresh(fixture, "_make_hook", taken), _fresh(fixture, "hook", taken)
        module, inputs, output = _hook_names(fixture, taken)
        stored = _code(_hook_statement(site, {site.value: output})).strip()
        method = cst.parse_statement(
            f"def {maker}({site.instance}):\n"
            f"    def {hook}({module}, {inputs}, {output}):\n"
            f"        {stored}\n"
            f"    return {hook}\n"
        )
        return f"{site.instance}.{maker}()", [method.with_changes(leading_lines=[cst.EmptyLine(indent=False)])], True

    return _moved_into_hook(fixture, factory)


def store_in_hook_callable(fixture: Fixture) -> cst.Module | None:
    """The same store moved into a forward hook that is a callable object of a new class, which
    holds the module: `self.fc.register_forward_hook(_Keep(self))`, with
    `class _Keep: def __call__(self, module, inputs, output): self.owner.cache.append(output)`."""

    def callable_class(site: _HookSite, taken: set[str]) -> tuple[str, list[cst.CSTNode], bool]:
        name = _fresh(fixture, "_Keep", taken)
        return f"{name}({site.instance})", [_holder_class(fixture, site, taken, name, "__call__")], False

    return _moved_into_hook(fixture, callable_class)


def store_in_hook_bound_method(fixture: Fixture) -> cst.Module | None:
    """The same store moved into a forward hook that is a bound method of a helper object:
    `self.fc.register_forward_hook(_Keeper(self).keep)`, with
    `class _Keeper: def keep(self, module, inputs, output): self.owner.cache.append(output)`."""

    def bound_method(site: _HookSite, taken: set[str]) -> tuple[str, list[cst.CSTNode], bool]:
        name, method = _fresh(fixture, "_Keeper", taken), _fresh(fixture, "keep", taken)
        return f"{name}({site.instance}).{method}", [_holder_class(fixture, site, taken, name, method)], False

    return _moved_into_hook(fixture, bound_method)


def _holder_class(fixture: Fixture, site: _HookSite, taken: set[str], name: str, method: str) -> cst.CSTNode:
    module, inputs, output = _hook_names(fixture, taken)
    owner = _fresh(fixture, "owner", taken)
    holder = "self" if "self" not in (module, inputs, output, owner) else _fresh(fixture, "keeper", taken)
    stored = _code(_hook_statement(site, {site.value: output, site.instance: f"{holder}.{owner}"})).strip()
    empty = cst.EmptyLine(indent=False)
    definition = cst.parse_statement(
        f"class {name}:\n"
        f"    def __init__({holder}, {owner}):\n"
        f"        {holder}.{owner} = {owner}\n\n"
        f"    def {method}({holder}, {module}, {inputs}, {output}):\n"
        f"        {stored}\n"
    )
    return definition.with_changes(leading_lines=[empty, empty])


# --- 10. a loop's body moved into a LightningModule's training_step --------------------------------

_NOT_MOVABLE = (cst.Return, cst.Yield, cst.Await, cst.Break, cst.Continue, cst.FunctionDef, cst.Lambda, cst.ClassDef,
                cst.Global, cst.Nonlocal, cst.NamedExpr, cst.CompFor)  # fmt: skip


def loop_body_to_training_step(fixture: Fixture) -> cst.Module | None:
    """A loop over batches with a marked TL004 accumulation (`total += loss`, `total = total + loss`)
    becomes a loop that calls a LightningModule's `training_step` once per batch, its body moved
    there: the function's variables that the body reads or updates become the module's attributes
    (given in `__init__`, copied back after the loop), the loop variables come in as the batch.

    `for inputs, targets in loader: ...; total += loss` ->
    `step = _Step(model, total)`, `for i, batch in enumerate(loader): step.training_step(batch, i)`,
    `total = step.total`, with `def training_step(self, batch, batch_idx): inputs, targets = batch; ...;
    self.total += loss`. The module's step is called directly, with gradients on, as in the loop.
    Stores (`losses.append(loss)`, `d[k] = v`) are left alone: one in a step method is TL001's, a
    container kept until it is cleared.
    """
    taken: set[str] = set()
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    definitions: list[cst.CSTNode] = []
    for loop in {_movable_loop(fixture, s) for s in fixture.marked_statements} - {None}:
        assert isinstance(loop, cst.For)
        function = cst.ensure_type(fixture.enclosing(loop, (cst.FunctionDef,)), cst.FunctionDef)
        shared = _loop_state(function, loop)
        marked_here = [s for s in fixture.marked_statements if any(n is s for n in _walk(loop.body))]
        if shared is None or any(_movable_loop(fixture, s) is None for s in marked_here):
            continue  # a marked store moves too: in a step method, it would be TL001's
        names = {n: _fresh(fixture, n, taken) for n in ("_Step", "step", "lm", "batch", "batch_idx", "i")}
        lm = names["lm"]
        attributes = {n: _fresh(fixture, f"{n}_", taken) if n in _MODULE_ATTRIBUTES else n for n in shared}
        renamed = [
            cst.ensure_type(s.visit(_Renamed({n: f"{lm}.{a}" for n, a in attributes.items()})), cst.BaseStatement)
            for s in loop.body.body
        ]
        unpack = cst.parse_statement(f"{_code(loop.target)} = {names['batch']}\n")
        init = "".join(f"        {lm}.{attributes[n]} = {n}\n" for n in shared)
        header = cst.parse_statement(
            f"class {names['_Step']}(LightningModule):\n"
            f"    def __init__({', '.join([lm, *shared])}):\n"
            f"        super().__init__()\n{init}\n"
            f"    def training_step({lm}, {names['batch']}, {names['batch_idx']}):\n"
            f"        pass\n"
        )
        cls = cst.ensure_type(header, cst.ClassDef)
        step_method = cst.ensure_type(cls.body.body[-1], cst.FunctionDef)
        step_method = step_method.with_changes(body=step_method.body.with_changes(body=[unpack, *renamed]))
        cls = cls.with_changes(body=cls.body.with_changes(body=[*cls.body.body[:-1], step_method]))
        empty = cst.EmptyLine(indent=False)
        definitions += [
            cst.parse_statement("from lightning.pytorch import LightningModule\n"),
            cls.with_changes(leading_lines=[empty, empty]),
        ]
        step, batch, i = names["step"], names["batch"], names["i"]
        written = sorted(_assigned_in(loop.body) & set(shared))
        replacement = [
            cst.parse_statement(f"{step} = {names['_Step']}({', '.join(shared)})\n"),
            cst.parse_statement(
                f"for {i}, {batch} in enumerate({_code(loop.iter)}):\n    {step}.training_step({batch}, {i})\n"
            ),
            *(cst.parse_statement(f"{n} = {step}.{attributes[n]}\n") for n in written),
        ]
        swap[loop] = lambda _, new=replacement: cst.FlattenSentinel(new)  # type: ignore[misc]
    if definitions:
        swap[fixture.module] = _with_functions(definitions)  # type: ignore[arg-type]
    return _swapped(fixture, swap)


def loop_body_to_step_function(fixture: Fixture) -> cst.Module | None:
    """A loop over batches with a marked TL004 statement gets its body moved into a function nested
    just before it and called once per iteration with the loop variables; the variables of the
    function around it that the body rebinds are declared `nonlocal`.

    `for x, y in loader: ...; total += loss` -> `def _step(x, y): nonlocal total; ...; total += loss`
    then `for x, y in loader: _step(x, y)`.
    """
    taken: set[str] = set()
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    for loop in {_loop_around_marked(fixture, s) for s in fixture.marked_statements} - {None}:
        assert isinstance(loop, cst.For)
        function = cst.ensure_type(fixture.enclosing(loop, (cst.FunctionDef,)), cst.FunctionDef)
        shared = _loop_state(function, loop)
        if shared is None:
            continue
        step = _fresh(fixture, "_step", taken)
        own = list(dict.fromkeys(n.value for n in _walk(loop.target) if isinstance(n, cst.Name)))
        rebound = sorted(_assigned_in(loop.body) & set(shared))
        header = cst.ensure_type(cst.parse_statement(f"def {step}({', '.join(own)}):\n    pass\n"), cst.FunctionDef)
        body = [cst.parse_statement(f"nonlocal {', '.join(rebound)}\n")] if rebound else []
        nested = header.with_changes(body=header.body.with_changes(body=[*body, *loop.body.body]))
        call = cst.parse_statement(f"{step}({', '.join(own)})\n")
        moved = loop.with_changes(body=loop.body.with_changes(body=[call]))
        swap[loop] = lambda _, new=(nested, moved): cst.FlattenSentinel(new)  # type: ignore[misc]
    return _swapped(fixture, swap)


def _loop_around_marked(fixture: Fixture, statement: cst.BaseStatement) -> cst.For | None:
    """The `for` loop directly in a function's body around a marked TL004 statement, if its body can
    move into a function (no `return`, `break`, nested scopes, ...)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and _line_codes(statement) == ["TL004"]):
        return None
    loop = fixture.enclosing(statement, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef))
    if not isinstance(loop, cst.For) or loop.asynchronous or loop.orelse is not None:
        return None
    function = fixture.enclosing(loop, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.If, cst.With, cst.Try))
    if not isinstance(function, cst.FunctionDef) or fixture.parents.get(loop) is not function.body:
        return None
    return None if any(isinstance(n, _NOT_MOVABLE) for n in _walk(loop.body)) else loop


# What nn.Module and LightningModule define already (some are read-only): a variable of that name
# becomes an attribute with a trailing underscore.
_MODULE_ATTRIBUTES = frozenset(
    ["device", "dtype", "training", "trainer", "logger", "log", "hparams", "current_epoch", "global_step",
     "optimizers", "lr_schedulers", "precision", "fabric", "on_gpu", "local_rank", "global_rank", "forward",
     "train", "eval", "parameters", "modules", "children", "state_dict", "to", "cuda", "cpu", "float", "half",
     "apply", "zero_grad", "log_dict", "print", "loggers", "example_input_array", "automatic_optimization"]
)  # fmt: skip


def _movable_loop(fixture: Fixture, statement: cst.BaseStatement) -> cst.For | None:
    """The loop around a marked TL004 accumulation (not a store) whose body can move into a step method."""
    loop = _loop_around_marked(fixture, statement)
    if loop is None:
        return None
    assert isinstance(statement, cst.SimpleStatementLine)
    small = statement.body[0]
    accumulates = isinstance(small, cst.AugAssign) and not isinstance(small.value, cst.List | cst.Tuple)
    accumulates |= (
        isinstance(small, cst.Assign)
        and all(isinstance(t.target, cst.Name) for t in small.targets)
        and not any(concatenated_operand(t.target, small.value) for t in small.targets)
    )
    # A store into a container that a step method keeps (`torch.cat([preds, out])` too) is TL001's:
    # kept until cleared.
    return loop if accumulates else None


def _loop_state(function: cst.FunctionDef, loop: cst.For) -> list[str] | None:
    """The function's variables the body reads or writes (bound before the loop; loop variables
    aside), or None where moving the body would change what runs: a name the body makes that the
    function reads after the loop, or a variable bound only after it."""
    statements = list(function.body.body)
    before, after = statements[: statements.index(loop)], statements[statements.index(loop) + 1 :]
    params = {
        p.name.value for p in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]
    }
    bound_before = params | {n for s in before for n in _assigned_in(s)}
    own = _variables(loop.target)
    used = _variables(loop.body)
    shared = sorted((used & bound_before) - own)
    made = _assigned_in(loop.body) - set(shared)
    read_after = {n for s in after for n in _variables(s)}
    later = {n for s in after for n in _assigned_in(s)}
    if made & read_after or (used - own - bound_before) & later or "super" in used:
        return None
    return shared


def _assigned_in(node: cst.CSTNode) -> set[str]:
    """Names a statement binds: assignment, augmented assignment and loop targets (`x`, `a, *b`;
    not `self.x` nor `d[k]`, which change an object and bind no name)."""
    names: set[str] = set()
    for child in [node, *_walk(node)]:
        if isinstance(child, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.For):
            names |= _bound_names(child.target)
    return names


def _bound_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, cst.Tuple | cst.List):
        return {n for element in target.elements for n in _bound_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return set()


def _variables(node: cst.CSTNode) -> set[str]:
    """The names `node` reads or binds: not an attribute's field (`self.state` reads `self`) nor
    a keyword's name."""
    nodes = [node, *_walk(node)]
    fields = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    fields |= {id(n.keyword) for n in nodes if isinstance(n, cst.Arg) and n.keyword is not None}
    return {n.value for n in nodes if isinstance(n, cst.Name) and id(n) not in fields}


# --- 11. the order of definitions -----------------------------------------------------------------


def respell_strings_and_spacing(fixture: Fixture) -> cst.Module | None:
    """`d["k"] = f(d["k"])` -> `d[ 'k' ] = f(d["k"])`: every other one-line string in the other
    quotes, a space inside every other subscript's brackets. Python reads the same code, so the
    verdict may not rest on how each occurrence of an expression is spelled.

    Strings holding a quote or a backslash keep theirs, as do strings inside an f-string's braces;
    brackets already broken over lines keep their layout (a comment there may be a marker)."""
    swap: dict[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]] = {}
    strings = subscripts = 0
    for node in fixture.nodes:
        if (
            isinstance(node, cst.SimpleString)
            and (respelled := _in_other_quotes(node.value)) is not None
            and not _inside_f_string(fixture, node)
        ):
            strings += 1
            if strings % 2:
                swap[node] = _replace_with(node.with_changes(value=respelled))
        elif (
            isinstance(node, cst.Subscript)
            and isinstance(node.lbracket.whitespace_after, cst.SimpleWhitespace)
            and isinstance(node.rbracket.whitespace_before, cst.SimpleWhitespace)
        ):
            subscripts += 1
            if subscripts % 2:
                swap[node] = _spaced_brackets
    return _swapped(fixture, swap)


def _inside_f_string(fixture: Fixture, node: cst.CSTNode) -> bool:
    """A string in an f-string's braces: before Python 3.12 it may not use the f-string's quotes."""
    current = fixture.parents.get(node)
    while current is not None:
        if isinstance(current, cst.FormattedString):
            return True
        current = fixture.parents.get(current)
    return False


def _in_other_quotes(literal: str) -> str | None:
    quote = literal[:1]
    body = literal[1:-1]
    if quote not in ("'", '"') or literal.startswith(quote * 3) or any(c in body for c in "'\\\""):
        return None
    other = '"' if quote == "'" else "'"
    return f"{other}{body}{other}"


def _spaced_brackets(node: cst.CSTNode) -> cst.CSTNode:
    space = cst.SimpleWhitespace(" ")
    return node.with_changes(
        lbracket=cst.LeftSquareBracket(whitespace_after=space), rbracket=cst.RightSquareBracket(whitespace_before=space)
    )


def reverse_definition_order(fixture: Fixture) -> cst.Module | None:
    """The methods of each class in reverse order, and each run of module functions with nothing
    between them: every one is bound before any of them runs. Not where a statement among them, a
    decorator, a default or an annotation reads one's name (`__call__ = forward`, `@value.setter`)."""

    class Reverse(cst.CSTTransformer):
        def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
            body = updated_node.body.body
            slots = [i for i, statement in enumerate(body) if isinstance(statement, cst.FunctionDef)]
            return updated_node.with_changes(body=updated_node.body.with_changes(body=_reversed(body, slots)))

        def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
            body = list(updated_node.body)
            runs: list[list[int]] = []
            for i, statement in enumerate(body):
                if not isinstance(statement, cst.FunctionDef):
                    continue
                if runs and runs[-1][-1] == i - 1:
                    runs[-1].append(i)
                else:
                    runs.append([i])
            for run in runs:
                body = _reversed(body, run)
            return updated_node.with_changes(body=body)

    return fixture.module.visit(Reverse())


def _reversed(body: Sequence[cst.BaseStatement], slots: list[int]) -> list[cst.BaseStatement]:
    """The body with the functions at `slots` in reverse order, where nothing there reads their names."""
    functions = [body[i] for i in slots]
    names = {f.name.value for f in functions if isinstance(f, cst.FunctionDef)}
    readers = [s for i, s in enumerate(body) if i not in slots]
    # what a `def` runs when it runs: its decorators, defaults and annotations
    readers += [d for f in functions if isinstance(f, cst.FunctionDef) for d in f.decorators]
    readers += [part for f in functions if isinstance(f, cst.FunctionDef) for part in (f.params, f.returns) if part]
    if len(slots) < 2 or any(names & _names_read(reader) for reader in readers):
        return list(body)
    reordered = list(body)
    for slot, function in zip(slots, reversed(functions), strict=True):
        reordered[slot] = function
    return reordered


def _names_read(node: cst.CSTNode) -> set[str]:
    return {n.value for n in [node, *_walk(node)] if isinstance(n, cst.Name)}


# ---------------------------------------------------------------------------------------------
# The registry, and the invariance table

TRANSFORMATIONS = (
    Transformation("rename_defined_names", rename_defined_names),
    Transformation("alias_torch_import", alias_torch_import),
    Transformation("from_import_submodules", from_import_submodules),
    Transformation("import_submodules_as", import_submodules_as),
    Transformation("spell_out_submodules", spell_out_submodules),
    Transformation("append_to_iadd", append_to_iadd),
    Transformation("append_to_extend", append_to_extend),
    Transformation("wrap_in_if_true", wrap_in_if_true),
    Transformation("wrap_in_nullcontext", wrap_in_nullcontext),
    Transformation("wrap_in_try_reraise", wrap_in_try_reraise),
    Transformation("extract_store_to_method", extract_store_to_method),
    Transformation("extract_store_to_function", extract_store_to_function),
    Transformation("wrap_appended_in_tuple", wrap_appended_in_tuple),
    Transformation("wrap_appended_in_dict", wrap_appended_in_dict),
    Transformation("store_in_hook_factory", store_in_hook_factory),
    Transformation("store_in_hook_callable", store_in_hook_callable),
    Transformation("store_in_hook_bound_method", store_in_hook_bound_method),
    Transformation("loop_body_to_training_step", loop_body_to_training_step),
    Transformation("loop_body_to_step_function", loop_body_to_step_function),
    Transformation("reverse_definition_order", reverse_definition_order),
    Transformation("respell_strings_and_spacing", respell_strings_and_spacing),
)


@dataclass(frozen=True)
class Invariance:
    transformation: str
    summary: str
    applicable: int  # fixtures rewritten
    kept: int  # of those, fixtures whose verdict holds


def invariance_table() -> list[Invariance]:
    """Per transformation: how many fixtures it rewrites, and for how many the verdict holds."""
    rows = []
    fixtures = rule_fixtures()
    for transformation in TRANSFORMATIONS:
        sources = [(transformation.apply(f), f.name) for f in fixtures]
        applied = [(s, name) for s, name in sources if s is not None]
        kept = sum(findings(s, name) == markers(s) for s, name in applied)
        rows.append(Invariance(transformation.name, transformation.summary, len(applied), kept))
    return rows


def markdown(rows: Sequence[Invariance]) -> str:
    lines = ["| transformation | applicable | kept | rewrite |", "|---|---:|---:|---|"]
    lines += [f"| `{r.transformation}` | {r.applicable} | {r.kept} | {r.summary} |" for r in rows]
    total = sum(r.applicable for r in rows), sum(r.kept for r in rows)
    lines.append(f"| all | {total[0]} | {total[1]} | |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(invariance_table()))
