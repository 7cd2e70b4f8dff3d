"""The analysis's front door: what rules and front-ends may use; the submodules are its inside.

`analyze(module)` runs two passes over a parsed module: `index` collects imports, classes,
functions and the roles they play (forward code, hooks, DataLoader worker code); `flow` then
walks each function in statement order and records the events that rules judge in a `Facts`
record: values stored into containers (`Store`), accumulations (`Accumulation`), closures that
escape (`ClosureEscape`), CUDA work (`CudaWork`). Rules read those and ask the helpers below
about syntax; front-ends parse (`parse_module`), analyse, and keep other modules in a `Project`.
"""

from tensorlint.analysis.edits import method_call, with_import, with_keyword, without_argument, wrapped_in_with
from tensorlint.analysis.facts import (
    STORE_METHODS,
    Accumulation,
    ClosureEscape,
    CudaWork,
    Facts,
    Loop,
    Store,
    Summary,
    bounded_per_call,
    names_reaching,
    root_name,
    tensor_keyed,
)
from tensorlint.analysis.flow import analyze
from tensorlint.analysis.index import (
    MODULE_HOOK_REGISTRATIONS,
    ClassInfo,
    ModuleIndex,
    Role,
    Unit,
    all_params,
    lineage,
    self_attribute,
)
from tensorlint.analysis.names import Imports, argument, callee_name, dotted_name, names_in, receiver, string_value
from tensorlint.analysis.parse import gc_paused, parse_module
from tensorlint.analysis.project import Project
from tensorlint.analysis.syntax import Place, calls_in, declared_container, is_training_iteration, own_nodes, placed
from tensorlint.analysis.values import Value, is_loss_name
from tensorlint.analysis.walk import walk

__all__ = [
    "MODULE_HOOK_REGISTRATIONS",
    "STORE_METHODS",
    "Accumulation",
    "ClassInfo",
    "ClosureEscape",
    "CudaWork",
    "Facts",
    "Imports",
    "Loop",
    "ModuleIndex",
    "Place",
    "Project",
    "Role",
    "Store",
    "Summary",
    "Unit",
    "Value",
    "all_params",
    "analyze",
    "argument",
    "bounded_per_call",
    "callee_name",
    "calls_in",
    "declared_container",
    "dotted_name",
    "gc_paused",
    "is_loss_name",
    "is_training_iteration",
    "lineage",
    "method_call",
    "names_in",
    "names_reaching",
    "own_nodes",
    "parse_module",
    "placed",
    "receiver",
    "root_name",
    "self_attribute",
    "string_value",
    "tensor_keyed",
    "walk",
    "with_import",
    "with_keyword",
    "without_argument",
    "wrapped_in_with",
]
