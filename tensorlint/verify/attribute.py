"""Who holds the leaked storages: from the ledger's survivors to a path in the user's words.

Three steps: map surviving storages to Python tensors through `gc`; walk referrers
breadth-first, one heap scan per level for all tensors at once, up to a root (an object's
attribute, a module global, a local of the measured loop); storages no Python object
holds are looked for in the `_saved_*` tensors of live autograd graphs.
"""

from __future__ import annotations

import gc
import sys
import types
from collections import deque
from collections.abc import Iterator
from typing import Any

import torch

from tensorlint.verify.ledger import Entry, StorageLedger
from tensorlint.verify.verdict import Holder, Site

MAX_DEPTH = 8
CONTAINERS = (list, tuple, dict, set, frozenset, deque)
# Objects whose attributes name a place in the user's program: stop the walk there.
_PLAIN = (*CONTAINERS, types.CellType, types.FunctionType, types.MethodType, types.FrameType, types.TracebackType)


def attribute(
    ledger: StorageLedger, frame: types.FrameType | None = None, module: types.ModuleType | None = None
) -> tuple[tuple[Holder, ...], tuple[Site, ...]]:
    """Holders and allocation sites of the ledger's survivors. `frame`: the measured loop's frame
    (its locals are roots); `module`: the user's module (its globals are roots)."""
    entries = list(ledger.live.items())
    tensors = _tensors_by_storage({key for key, _ in entries})
    by_site: dict[tuple[str, str, str], list[tuple[tuple[str, int], Entry]]] = {}
    for key, entry in entries:
        by_site.setdefault(_site_key(entry), []).append((key, entry))
    # One representative per site, when a Python tensor for it exists.
    representatives = {}
    for site, items in by_site.items():
        held = [tensors[k] for k, _ in items if k in tensors]
        if held:
            representatives[site] = held[0]  # the oldest: the newest may still be in use
    found = _roots(list(representatives.values()), frame)
    site_holder: dict[tuple[str, str, str], tuple[str, str]] = {
        site: found[id(tensor)] for site, tensor in representatives.items() if id(tensor) in found
    }
    # The rest is held from C++ only (saved for backward; PyTorch may keep a Python wrapper
    # alive for it, with no Python referrer): look for the autograd graph that saves it.
    unheld = {k for site, items in by_site.items() if site not in site_holder for k, _ in items}
    if unheld:
        path, nodes = _graph_holder(unheld, frame, _user_modules(entries, module))
        if path:
            for site, items in by_site.items():
                if site not in site_holder and any(k in unheld for k, _ in items):
                    site_holder[site] = (f"autograd graph of {path} ({nodes} nodes)", "autograd graph")
    grouped: dict[tuple[str, str], list[Entry]] = {}
    for site, items in by_site.items():
        holder = site_holder.setdefault(site, ("an object the walk did not reach", "unknown"))
        grouped.setdefault(holder, []).extend(e for _, e in items)
    holders = [Holder(path, kind, len(items), sum(e.nbytes for e in items)) for (path, kind), items in grouped.items()]
    holders.sort(key=lambda h: -h.bytes)
    sites = [
        Site(*key, len(items), sum(e.nbytes for _, e in items), items[0][1].stack, site_holder[key][0])
        for key, items in by_site.items()
    ]
    return tuple(holders), tuple(sorted(sites, key=lambda s: -s.bytes))


def _site_key(entry: Entry) -> tuple[str, str, str]:
    return (entry.site, entry.op, entry.shape)


def _is_tensor(obj: object) -> bool:
    return type(obj) is torch.Tensor or type(obj) is torch.nn.Parameter


def _tensors_by_storage(keys: set[tuple[str, int]]) -> dict[tuple[str, int], Any]:
    found: dict[tuple[str, int], Any] = {}
    for obj in gc.get_objects():
        if _is_tensor(obj):
            key = (str(obj.device), obj.untyped_storage().data_ptr())
            if key in keys:
                found[key] = obj
    return found


def _graph_holder(
    unheld: set[tuple[str, int]], frame: types.FrameType | None, modules: list[types.ModuleType]
) -> tuple[str, int]:
    """Who roots the autograd graph that saves the storages nobody else holds, and its size in nodes.

    Walks down from names, the loop's locals first, then the user's module globals, with one
    level of their attributes and items, to tensors whose `grad_fn` graph saves those storages:
    the name that roots the graph is the holder (`local `total_loss` in evaluate()`). Only when
    no name reaches it, the heap is searched for the root tensor and its referrers walked up."""
    keep: dict[int, Any] = {}  # every node wrapper seen stays alive, so that no id is reused
    best: tuple[str, int, int] = ("", 0, 0)
    for path, tensor in _named_tensors(frame, modules):
        saved, nodes = _saved_storages(tensor.grad_fn, keep, {})
        covered = len(saved & unheld)
        if covered > best[1]:
            best = (path, covered, nodes)
    if best[0]:
        return best[0], best[2]
    root, nodes = _graph_root(unheld, keep)
    if root is None:
        return "", 0
    path, _ = _roots([root], frame).get(id(root), ("a tensor the walk did not reach", ""))
    return path, nodes


def largest_graph(frame: types.FrameType | None, module: types.ModuleType | None) -> Holder | None:
    """The name rooting the largest autograd graph: who holds a graph that grows on the host only
    (`total_loss += loss` after `backward()`: no tensor memory, one chain of nodes per step)."""
    keep: dict[int, Any] = {}
    best: tuple[str, int] = ("", 0)
    for path, tensor in _named_tensors(frame, [module] if module is not None else []):
        _, nodes = _saved_storages(tensor.grad_fn, keep, {})
        if nodes > best[1]:
            best = (path, nodes)
    if not best[0]:
        return None
    return Holder(f"autograd graph of {best[0]} ({best[1]} nodes)", "autograd graph", 0, 0)


def _named_tensors(frame: types.FrameType | None, modules: list[types.ModuleType]) -> Iterator[tuple[str, Any]]:
    """(name in the user's words, tensor with a graph), from the frame's locals and the modules' globals."""
    if frame is not None and frame.f_code.co_name != "<module>":  # a script's top level: its globals, below
        where = f"in {frame.f_code.co_name}()"
        for name, value in list(frame.f_locals.items()):
            for expression, tensor in _tensors_in(value, name, 2):
                yield f"local `{expression}` {where}", tensor
    for module in modules:
        for name, value in list(vars(module).items()):
            if not isinstance(value, (types.ModuleType, type, types.FunctionType)):
                for expression, tensor in _tensors_in(value, name, 2):
                    yield f"global `{expression}` in {module.__name__}", tensor


def _tensors_in(value: Any, expression: str, depth: int) -> Iterator[tuple[str, Any]]:
    """Tensors with a graph in `value` and below it (items, attributes), `depth` levels down."""
    if _is_tensor(value):
        if value.grad_fn is not None:
            yield expression, value
        return
    if depth == 0:
        return
    if isinstance(value, (list, tuple, deque)):
        for index, item in enumerate(list(value)[:1000]):
            yield from _tensors_in(item, f"{expression}[{index}]", depth - 1)
    elif isinstance(value, dict):
        for key, item in list(value.items())[:1000]:
            yield from _tensors_in(item, f"{expression}[{key!r}]", depth - 1)
    elif not isinstance(value, (*_PLAIN, types.ModuleType)) and _is_place(value):
        for name, item in list(vars(value).items()):
            yield from _tensors_in(item, f"{expression}.{name}", depth - 1)


def _user_modules(entries: list[tuple[tuple[str, int], Entry]], module: types.ModuleType | None) -> list[Any]:
    """The measured module, else the modules whose code allocated the survivors."""
    if module is not None:
        return [module]
    files = {e.site.rsplit(":", 1)[0] for _, e in entries}
    return [m for m in list(sys.modules.values()) if getattr(m, "__file__", None) in files]


def _graph_root(unheld: set[tuple[str, int]], keep: dict[int, Any]) -> tuple[Any, int]:
    """The live tensor whose autograd graph saves most of the storages nobody else holds."""
    best: tuple[Any, int, int] = (None, 0, 0)
    for tensor in [o for o in gc.get_objects() if _is_tensor(o) and o.grad_fn is not None]:
        grad_fn = tensor.grad_fn
        if id(grad_fn) in keep and keep[id(grad_fn)] is grad_fn:
            continue  # inside a graph already searched
        saved, nodes = _saved_storages(grad_fn, keep, {})
        covered = len(saved & unheld)
        if covered > best[1]:
            best = (tensor, covered, nodes)
    return best[0], best[2]


def _saved_storages(grad_fn: Any, keep: dict[int, Any], nodes: dict[int, Any]) -> tuple[set[tuple[str, int]], int]:
    """The storages a graph saves for backward, and its number of nodes. `keep` holds every node
    wrapper seen (a freed wrapper's id can be reused by a new one: ids are compared only while alive)."""
    saved: set[tuple[str, int]] = set()
    stack = [grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in nodes:
            continue
        nodes[id(node)] = node
        keep[id(node)] = node
        for name in dir(node):
            if name.startswith("_saved_"):
                try:
                    value = getattr(node, name)
                except RuntimeError:  # already freed by backward()
                    continue
                for item in value if isinstance(value, tuple) else (value,):
                    if isinstance(item, torch.Tensor):
                        saved.add((str(item.device), item.untyped_storage().data_ptr()))
        stack.extend(child for child, _ in node.next_functions)
    return saved, len(nodes)


def _roots(targets: list[Any], frame: types.FrameType | None) -> dict[int, tuple[str, str]]:
    """Walk referrers upward from all targets at once; a path per target id."""
    found: dict[int, tuple[str, str]] = {}
    module_dicts = {id(vars(m)): m for m in list(sys.modules.values()) if m is not None and hasattr(m, "__dict__")}
    stack_frames = set()
    current: types.FrameType | None = sys._getframe()
    while current is not None:
        if current is not frame:
            stack_frames.add(id(current))
        current = current.f_back
    # frontier: id(object) -> (object, chain from target up to it, target id)
    frontier: dict[int, tuple[Any, list[Any], int]] = {id(t): (t, [t], id(t)) for t in targets}
    visited = set(frontier)
    bookkeeping = {id(frontier), id(targets), id(visited)}
    for _ in range(MAX_DEPTH):
        if not frontier:
            break
        if frame is not None:
            for name, value in frame.f_locals.items():
                hit = frontier.get(id(value))
                if hit and hit[2] not in found:
                    found[hit[2]] = _render([*hit[1], frame], name, module_dicts)
        objects = [o for o, _, _ in frontier.values()]
        referrers = gc.get_referrers(*objects)
        bookkeeping.add(id(objects))
        following: dict[int, tuple[Any, list[Any], int]] = {}
        for referrer in referrers:
            if id(referrer) in visited or id(referrer) in bookkeeping or id(referrer) in stack_frames:
                continue
            if referrer is frame or (
                isinstance(referrer, types.FrameType) and referrer.f_code is getattr(frame, "f_code", None)
            ):
                continue  # the loop's own locals are read above, by name
            for child in gc.get_referents(referrer):
                hit = frontier.get(id(child))
                if hit is None or hit[2] in found:
                    continue
                chain = [*hit[1], referrer]
                if id(referrer) in module_dicts or (not isinstance(referrer, _PLAIN) and _is_place(referrer)):
                    found[hit[2]] = _render(chain, None, module_dicts)
                else:
                    following.setdefault(id(referrer), (referrer, chain, hit[2]))
        visited |= set(following)
        frontier = {k: v for k, v in following.items() if v[2] not in found}
    del frontier
    return found


def _is_place(obj: object) -> bool:
    """A user-level object: an nn.Module, or an instance of a class defined outside builtins/torch."""
    module = type(obj).__module__ or ""
    if isinstance(obj, torch.nn.Module):
        return True
    # `functools.partial` wraps what it holds (a hook's arguments): the place is what holds the partial.
    return hasattr(obj, "__dict__") and module not in ("builtins", "functools") and not module.startswith("torch")


def _render(chain: list[Any], local: str | None, module_dicts: dict[int, Any]) -> tuple[str, str]:
    root = chain[-1]
    below = chain[-2]
    if local is not None:
        base, kind = f"local `{local}` in {root.f_code.co_name}()", "local"
    elif id(root) in module_dicts:
        name = _key_of(root, below)
        module = module_dicts[id(root)].__name__
        base, kind = f"global `{name}` in {module}", "global"
    else:
        attributes = vars(root) if hasattr(root, "__dict__") else {}
        name = _key_of(attributes, below)
        if name is None and len(chain) >= 3 and below is attributes:
            name = _key_of(attributes, chain[-3])
        base = f"{type(root).__name__}.{name or '?'}"
        kind = "module attribute" if isinstance(root, torch.nn.Module) else "attribute"
    own_dict = getattr(root, "__dict__", None)
    container = next(
        (c for c in reversed(chain[1:-1]) if isinstance(c, (list, dict, set, deque)) and c is not own_dict), None
    )
    if container is not None:
        count = len(container)
        base += f" ({type(container).__name__}, {count} item{'' if count == 1 else 's'})"
    exception = next((c for c in chain if isinstance(c, BaseException)), None)
    function = next((c for c in chain if isinstance(c, types.FunctionType)), None)
    if exception is not None:
        return f"traceback of {type(exception).__name__} kept in {base}", "exception traceback"
    if function is not None and any(isinstance(c, types.CellType) for c in chain):
        return f"closure of {function.__qualname__} kept in {base}", "closure cell"
    return base, kind


def _key_of(mapping: Any, value: object) -> str | None:
    if isinstance(mapping, dict):
        for key, item in mapping.items():
            if item is value:
                return str(key)
    return None
