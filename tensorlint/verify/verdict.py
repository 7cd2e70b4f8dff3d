"""The result of a verification: a verdict with the numbers behind it. No torch here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

CONFIRMED = "confirmed"
HOST_ONLY = "host-only"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
VERDICTS = (CONFIRMED, HOST_ONLY, NOT_REPRODUCED, INCONCLUSIVE)
UNITS = {"loop iteration": "iteration", "optimizer step": "step", "DataLoader batch": "batch"}  # else "call"


@dataclass(frozen=True)
class Holder:
    """Who keeps leaked tensors alive: `path` in the words of the user's code."""

    path: str
    kind: str  # module attribute, attribute, global, closure cell, exception traceback, autograd graph, local
    tensors: int
    bytes: int


@dataclass(frozen=True)
class Site:
    """Where leaked storages were allocated."""

    site: str
    op: str
    shape: str
    storages: int
    bytes: int
    stack: tuple[str, ...] = ()  # the user frames of the first of them, innermost first
    holder: str = ""  # the path of the holder that keeps them


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str = ""
    device: str = "cpu"
    torch: str = ""
    mode: str = ""  # call, train, forward, loop iteration, dataloader
    calls: int = 0
    warmup: int = 0
    bytes_per_call: float = 0.0  # Theil-Sen slope of live ledger bytes
    deltas: tuple[int, ...] = ()
    delta_fraction: float = 0.0
    split_ratio: float | None = None
    r2: float | None = None
    threshold: float = 0.0
    allocated_per_call: float = 0.0  # everything the step allocates, freed or not
    graph_nodes_per_call: float = 0.0
    tensors_per_call: float = 0.0  # Theil-Sen slope of live ledger tensors (storages)
    basis: str = ""  # what confirmed a leak: "bytes" (the slope cleared the threshold) or "tensors" (one more per call)
    holders: tuple[Holder, ...] = ()
    sites: tuple[Site, ...] = ()
    allocated_at: str = ""  # on CUDA, from the caching allocator's history: "FILE:LINE FUNCTION"
    cross_check: dict[str, Any] = field(default_factory=dict)  # CUDA allocator numbers
    workers: tuple[dict[str, Any], ...] = ()  # TL003: what DataLoader workers asked of CUDA
    series: dict[str, list[int]] = field(default_factory=dict)  # --run: bytes, tensors, nodes at each sample
    ending: str = ""  # --run: how the script ended (stopped, exited, raised)
    seconds: float = 0.0

    @property
    def leaks(self) -> bool:
        return self.verdict in (CONFIRMED, HOST_ONLY)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        data = dict(data)
        data["holders"] = tuple(Holder(**h) for h in data.get("holders", ()))
        data["sites"] = tuple(Site(**{**s, "stack": tuple(s.get("stack", ()))}) for s in data.get("sites", ()))
        data["deltas"] = tuple(data.get("deltas", ()))
        data["workers"] = tuple(data.get("workers", ()))
        return cls(**data)

    def describe(self) -> str:
        """One line, as printed under a finding: `CONFIRMED on cpu: +128.0 KiB per call ...`."""
        where = f" on {self.device}" if self.device else ""
        head = f"{self.verdict.upper()}{where}"
        if self.verdict == INCONCLUSIVE:
            return f"{head}: {self.reason}"
        if self.workers or self.mode == "dataloader":
            return f"{head}: {self.reason}"
        unit = UNITS.get(self.mode, "call")
        if self.verdict == HOST_ONLY:
            text = (
                f"{head}: +{fmt_bytes(self.bytes_per_call)} tensor memory, "
                f"+{self.graph_nodes_per_call:.0f} autograd nodes per {unit} over {self.calls} {plural(unit)}"
            )
        else:
            text = f"{head}: +{fmt_bytes(self.bytes_per_call)} per {unit} over {self.calls} {plural(unit)}"
            if self.verdict == CONFIRMED and self.basis == "tensors":
                count = f"{self.tensors_per_call:g} tensor{'s' if self.tensors_per_call != 1 else ''}"
                text += (
                    f" (+{count} per {unit}, {round(self.delta_fraction * len(self.deltas))}/{len(self.deltas)} grew)"
                )
            elif self.verdict == CONFIRMED:
                grew = sum(1 for d in self.deltas if d >= self.threshold / 2)
                text += f" ({grew}/{len(self.deltas)} grew)"
        if self.verdict in (CONFIRMED, HOST_ONLY) and self.holders:
            # Holders that keep a tensor from about every call; the others hold what is in use now.
            growing = [h for h in self.holders if h.kind == "autograd graph" or h.tensors >= self.calls / 2]
            text += "; held by " + ", ".join(_holder_text(h, self.calls, unit) for h in (growing or self.holders)[:2])
        if self.verdict == CONFIRMED and self.allocated_at:
            line, _, function = short_site(self.allocated_at).partition(" ")
            text += f"; allocated at {line}" + (f" in {function}" if function else "")
        elif self.verdict == CONFIRMED and self.sites:
            site = self.sites[0]
            text += f"; allocated at {short_site(site.site)} ({site.op}, {site.shape})"
        if self.verdict == CONFIRMED:
            text += f"; ~{fmt_bytes(self.bytes_per_call * 1000)} after 1,000 {plural(unit)}"
        if self.reason and self.verdict != CONFIRMED:
            text += f" ({self.reason})"
        return text


def _holder_text(holder: Holder, calls: int, unit: str) -> str:
    per_call = holder.tensors / calls if calls else 0
    if holder.kind == "autograd graph":
        return holder.path
    items = f"+{per_call:.2g} tensor{'s' if per_call != 1 else ''} per {unit}"
    return f"{holder.path} ({items})"


def short_site(site: str) -> str:
    """`/abs/path/model.py:12 forward` -> `model.py:12 forward`."""
    location, _, function = site.partition(" ")
    path, _, line = location.rpartition(":")
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{line} {function}".strip()


def fmt_bytes(value: float) -> str:
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{sign}{value:.0f} {unit}" if unit == "B" else f"{sign}{value:.1f} {unit}"
        value /= 1024
    return f"{sign}{value:.1f} GiB"  # pragma: no cover


def plural(unit: str) -> str:
    """`call` -> `calls`, `DataLoader batch` -> `DataLoader batches`."""
    return f"{unit}es" if unit.endswith(("ch", "sh", "s", "x")) else f"{unit}s"
