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
from typing import Any

import torch

from tensorlint.verify.ledger import Entry, StorageLedger
from tensorlint.verify.verdict import Holder, Site

MAX_DEPTH = 8
CONTAINERS = (list, tuple, dict, set, frozenset, deque)
# Objects whose attributes name a place in the user's program: stop the walk there.
_PLAIN = (*CONTAINERS, types.CellType, types.FunctionType, types.MethodType, types.FrameType, types.TracebackType)


def attribute(
    ledger: StorageLedger, frame: types.FrameType | None = None
) -> tuple[tuple[Holder, ...], tuple[Site, ...]]:
    entries = list(ledger.live.items())
    sites = _sites([e for _, e in entries])
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
        root, nodes = _graph_root(unheld)
        if root is not None:
            path, _ = _roots([root], frame).get(id(root), ("a tensor the walk did not reach", ""))
            for site, items in by_site.items():
                if site not in site_holder and any(k in unheld for k, _ in items):
                    site_holder[site] = (f"autograd graph of {path} ({nodes} nodes)", "autograd graph")
    grouped: dict[tuple[str, str], list[Entry]] = {}
    for site, items in by_site.items():
        holder = site_holder.get(site, ("an object the walk did not reach", "unknown"))
        grouped.setdefault(holder, []).extend(e for _, e in items)
    holders = [Holder(path, kind, len(items), sum(e.nbytes for e in items)) for (path, kind), items in grouped.items()]
    holders.sort(key=lambda h: -h.bytes)
    return tuple(holders), sites


def _site_key(entry: Entry) -> tuple[str, str, str]:
    return (entry.site, entry.op, entry.shape)


def _sites(entries: list[Entry]) -> tuple[Site, ...]:
    grouped: dict[tuple[str, str, str], list[Entry]] = {}
    for entry in entries:
        grouped.setdefault(_site_key(entry), []).append(entry)
    sites = [Site(*key, len(items), sum(e.nbytes for e in items)) for key, items in grouped.items()]
    return tuple(sorted(sites, key=lambda s: -s.bytes))


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


def _graph_root(unheld: set[tuple[str, int]]) -> tuple[Any, int]:
    """The live tensor whose autograd graph saves most of the storages nobody else holds."""
    best: tuple[Any, int, int] = (None, 0, 0)
    seen_graphs: set[int] = set()
    for tensor in [o for o in gc.get_objects() if _is_tensor(o) and o.grad_fn is not None]:
        if id(tensor.grad_fn) in seen_graphs:
            continue
        saved, nodes = _saved_storages(tensor.grad_fn, seen_graphs)
        covered = len(saved & unheld)
        if covered > best[1]:
            best = (tensor, covered, nodes)
    return best[0], best[2]


def _saved_storages(grad_fn: Any, seen_graphs: set[int]) -> tuple[set[tuple[str, int]], int]:
    saved: set[tuple[str, int]] = set()
    nodes: dict[int, Any] = {}  # keeps the wrappers alive so that ids stay unique
    stack = [grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in nodes:
            continue
        nodes[id(node)] = node
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
    seen_graphs.update(nodes)
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
    return hasattr(obj, "__dict__") and module not in ("builtins",) and not module.startswith("torch")


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
