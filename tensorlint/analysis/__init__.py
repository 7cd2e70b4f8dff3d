"""The analysis's front door: what rules and front-ends may use; the submodules are its inside.

`analyze(module)` runs two passes over a parsed module: `index` collects imports, classes,
functions and the roles they play (forward code, hooks, DataLoader worker code); `flow` then
walks each function in statement order and records the events that rules judge in a `Facts`
record: values stored into containers (`Store`), accumulations (`Accumulation`), attributes replaced (`AttributeWrite`), closures that
escape (`ClosureEscape`), CUDA work (`CudaWork`). Rules read those and ask the helpers below
about syntax; front-ends parse (`parse_module`), analyse, and keep other modules in a `Project`.
"""

from tensorlint.analysis.edits import (
    method_call,
    with_first_statement,
    with_import,
    with_keyword,
    without_argument,
    wrapped_in_with,
)
from tensorlint.analysis.facts import (
    STORE_METHODS,
    Accumulation,
    AttributeWrite,
    ClosureEscape,
    CudaWork,
    Facts,
    Loop,
    Store,
    Summary,
    bounded_per_call,
    flowing_into,
    names_reaching,
    root_name,
    tensor_keyed,
)
from tensorlint.analysis.flow import analyze
from tensorlint.analysis.index import (
    MODULE_HOOK_REGISTRATIONS,
    TRAINING_STEPS,
    ClassInfo,
    LoaderCall,
    ModuleIndex,
    Role,
    Unit,
    all_params,
    lineage,
    resolve_callable,
    run_once_calls,
    self_attribute,
)
from tensorlint.analysis.names import (
    Imports,
    argument,
    callee_name,
    dotted_name,
    names_in,
    receiver,
    references,
    string_value,
)
from tensorlint.analysis.parse import gc_paused, parse_module
from tensorlint.analysis.project import Project
from tensorlint.analysis.recurrent import (
    BACKWARD_CALLS,
    CarriedState,
    carried_states,
    retain_graph_flag,
)
from tensorlint.analysis.syntax import (
    Place,
    calls_in,
    carried_names,
    declared_container,
    hook_registration,
    is_training_iteration,
    mentions,
    own_nodes,
    placed,
    removes_handles,
    repeats_per_step,
    target_names,
)
from tensorlint.analysis.values import Value, is_loss_name
from tensorlint.analysis.walk import walk

__all__ = [
    "BACKWARD_CALLS",
    "MODULE_HOOK_REGISTRATIONS",
    "STORE_METHODS",
    "TRAINING_STEPS",
    "Accumulation",
    "AttributeWrite",
    "CarriedState",
    "ClassInfo",
    "ClosureEscape",
    "CudaWork",
    "Facts",
    "Imports",
    "LoaderCall",
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
    "carried_names",
    "carried_states",
    "declared_container",
    "dotted_name",
    "flowing_into",
    "gc_paused",
    "hook_registration",
    "is_loss_name",
    "is_training_iteration",
    "lineage",
    "mentions",
    "method_call",
    "names_in",
    "names_reaching",
    "own_nodes",
    "parse_module",
    "placed",
    "receiver",
    "references",
    "removes_handles",
    "repeats_per_step",
    "resolve_callable",
    "retain_graph_flag",
    "root_name",
    "run_once_calls",
    "self_attribute",
    "string_value",
    "target_names",
    "tensor_keyed",
    "walk",
    "with_first_statement",
    "with_import",
    "with_keyword",
    "without_argument",
    "wrapped_in_with",
]
