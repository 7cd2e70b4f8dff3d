"""The storage ledger: every storage an aten op creates, alive until its last holder lets go.

A `TorchDispatchMode` sees each op below autograd, so it also sees tensors that only C++
holds (saved activations, dropout masks), which a `gc` census misses. PyTorch keeps a
storage's Python object alive as long as its C++ storage, so a `weakref.finalize` on it
fires exactly when the memory is released.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# Frames inside torch or the verifier are not where the user's allocation happened.
SKIP_DIRS = (
    os.path.dirname(torch.__file__),
    os.path.dirname(os.path.dirname(__file__)),
    os.path.join(sysconfig.get_paths()["stdlib"], ""),  # runpy, copy, threading: not the user's line
)


@dataclass
class Entry:
    """One live storage created while the ledger was recording."""

    storage: weakref.ref[Any]
    nbytes: int
    device: str
    op: str
    site: str  # "file:line function" of the first user frame
    shape: str  # dtype[shape] of the tensor that created it
    tick: int  # the sample index at which it was created
    stack: tuple[str, ...] = ()  # "file:line function" of the user frames below it, innermost first


class StorageLedger(TorchDispatchMode):  # type: ignore[misc]  # torch is not analysed (mypy config)
    """Use as a context manager; `recording` can be switched off for warm-up calls."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[tuple[str, int], Entry] = {}
        self.recording = False
        self.allocated = 0  # bytes of every new storage seen while recording, freed or not
        self.by_device: dict[str, int] = {}  # the same, per device: where the measured code runs
        self.tick = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if self.recording:
            self._record(func, args, kwargs, out)
        return out

    def _record(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        if not outputs:
            return
        # Views, in-place and out= ops return an input's storage: not a new allocation.
        inputs = {_ptr(t) for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for tensor in outputs:
            storage = tensor.untyped_storage()
            ptr = storage.data_ptr()
            nbytes = storage.nbytes()
            key = (str(tensor.device), ptr)
            if not ptr or not nbytes or ptr in inputs or key in self.live:
                continue
            site, stack = _user_stack()
            entry = Entry(
                weakref.ref(storage),
                nbytes,
                str(tensor.device),
                str(func.overloadpacket.__name__) if hasattr(func, "overloadpacket") else str(func),
                site,
                f"{str(tensor.dtype).removeprefix('torch.')}{list(tensor.shape)}",
                self.tick,
                stack,
            )
            self.live[key] = entry
            self.allocated += nbytes
            self.by_device[entry.device] = self.by_device.get(entry.device, 0) + nbytes
            weakref.finalize(storage, self._release, key, entry)

    def _release(self, key: tuple[str, int], entry: Entry) -> None:
        if self.live.get(key) is entry:  # the pointer may already belong to a newer storage
            del self.live[key]

    def live_tensors(self) -> int:
        """Storages created while recording and still alive: one more per call is a leak of any size."""
        return sum(1 for entry in list(self.live.values()) if entry.storage() is not None)

    def device(self) -> str:
        """Where the measured code ran: the device holding most of the surviving storages' bytes, else
        most of what it allocated. Empty when it allocated nothing: no device it did not use is named."""
        for source in (_bytes_by_device(self.live.values()), self.by_device):
            if source:
                return max(source, key=lambda d: source[d])
        return ""

    def live_bytes(self) -> int:
        """Re-read sizes through the weak references, so that `resize_` growth counts."""
        total = 0
        for entry in list(self.live.values()):
            storage = entry.storage()
            if storage is not None:
                entry.nbytes = storage.nbytes()
                total += entry.nbytes
        return total


def _bytes_by_device(entries: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for entry in list(entries):
        found[entry.device] = found.get(entry.device, 0) + entry.nbytes
    return found


def _ptr(tensor: torch.Tensor) -> int:
    try:
        return int(tensor.untyped_storage().data_ptr())
    except RuntimeError:  # tensors without storage (sparse, some subclasses)
        return 0


def _user_stack(depth: int = 6) -> tuple[str, tuple[str, ...]]:
    """The first user frame ("file:line function"), and up to `depth` user frames from there outwards."""
    frame: Any = sys._getframe(2)
    frames: list[str] = []
    while frame is not None and len(frames) < depth:
        if not frame.f_code.co_filename.startswith(SKIP_DIRS):
            frames.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        frame = frame.f_back
    return (frames[0] if frames else "?"), tuple(frames)
