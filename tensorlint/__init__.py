"""tensorlint: find PyTorch memory-leak patterns before the code runs.

The library core: `lint(source_or_path)` returns findings. The CLI, the flake8 plugin and
the pre-commit hook are front-ends over it. `tensorlint.verify(step)` and `tensorlint.watch()`
(the runtime verifier, extra `tensorlint[verify]`) import torch only when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tensorlint.findings import Applicability, Edit, Finding, Fix, Location

__version__ = "0.1.0"
__all__ = ["Applicability", "Edit", "Finding", "Fix", "Location", "__version__", "lint", "verify", "watch"]


def lint(target: str | Path, *, filename: str = "<string>", codes: frozenset[str] | None = None) -> list[Finding]:
    """Lint a file (a `Path`) or a source text (a `str`); all rules unless `codes` is given."""
    from tensorlint.engine import lint_file, lint_source

    if isinstance(target, Path):
        return lint_file(target, codes=codes)
    return lint_source(target, filename, codes=codes)


def __getattr__(name: str) -> Any:
    # Lazy, so that the static path never imports the verifier (nor torch).
    if name == "verify":
        import tensorlint.verify

        return tensorlint.verify
    if name == "watch":
        from tensorlint.verify import watch

        return watch
    raise AttributeError(name)
