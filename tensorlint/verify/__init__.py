"""The runtime verifier: run flagged code, measure tensor memory kept per call, name the holder.

Needs torch (`pip install tensorlint[verify]`); importing this package does not import it,
so the CLI and the pytest plugin stay cheap until a verification actually runs.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensorlint.verify.api import TensorLeakError, Watch
    from tensorlint.verify.verdict import Verdict

__all__ = ["TensorLeakError", "Verdict", "Watch", "verify", "watch"]


def verify(step: Any, *, calls: int = 20, warmup: int = 3, device: str = "auto") -> Verdict:
    """Run `step` warm-up plus `calls` times and return the verdict (see `tensorlint.verify.api`)."""
    from tensorlint.verify.api import verify as run

    return run(step, calls=calls, warmup=warmup, device=device)


def watch(warmup: int = 3, device: str = "auto") -> Watch:
    from tensorlint.verify.api import watch as start

    return start(warmup, device)


def __getattr__(name: str) -> Any:
    if name in ("TensorLeakError", "Watch"):
        from tensorlint.verify import api

        return getattr(api, name)
    if name == "Verdict":
        from tensorlint.verify.verdict import Verdict

        return Verdict
    raise AttributeError(name)


class _CallableModule(types.ModuleType):
    """`tensorlint.verify(step)` works although `tensorlint.verify` is this package: importing a
    submodule rebinds the parent's attribute to the package, so a plain function could not stay."""

    def __call__(self, step: Any, *, calls: int = 20, warmup: int = 3, device: str = "auto") -> Verdict:
        return verify(step, calls=calls, warmup=warmup, device=device)


sys.modules[__name__].__class__ = _CallableModule
