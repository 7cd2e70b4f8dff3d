"""The Python API: `verify(step)` for a callable, `watch()` for a loop the user drives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorlint.verify.sampler import Probe, measure
from tensorlint.verify.verdict import Verdict


class TensorLeakError(AssertionError):
    """Raised by the pytest plugin: the test body keeps tensor memory across calls."""

    def __init__(self, verdict: Verdict, limit: float = 0.0) -> None:
        self.verdict = verdict
        super().__init__(f"tensor leak: {verdict.describe()}" + (f" (limit {limit:g} B per call)" if limit else ""))


def verify(step: Callable[[], Any], *, calls: int = 20, warmup: int = 3, device: str = "auto") -> Verdict:
    """Call `step` `warmup` times, then `calls` times under the storage ledger, and judge.

    `step` is one unit of work (a forward, a training step); what it returns is dropped.
    """
    if calls < 3:
        raise ValueError("calls must be at least 3")
    return measure(step, calls=calls, warmup=warmup, device=device)


class Watch:
    """`with watch() as w: for batch in loader: step(batch); w.tick()`; then `w.verdict`."""

    def __init__(self, warmup: int = 3, device: str = "auto") -> None:
        self.warmup = warmup
        self.probe = Probe(device, mode="call")
        self.ticks = 0
        self.verdict: Verdict | None = None

    def __enter__(self) -> Watch:
        self.probe.__enter__()
        if self.warmup == 0:
            self.probe.start(0)
        return self

    def tick(self) -> None:
        """One unit of work is done: take a sample (the first `warmup` ticks only warm up)."""
        self.ticks += 1
        if self.ticks == self.warmup:
            self.probe.start(self.warmup)
        elif self.ticks > self.warmup:
            self.probe.sample()

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.verdict = self.probe.finish()
        finally:
            self.probe.__exit__(*exc)


def watch(warmup: int = 3, device: str = "auto") -> Watch:
    return Watch(warmup, device)
