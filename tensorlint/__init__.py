"""tensorlint: find PyTorch memory-leak patterns before the code runs.

The library core: `lint(source_or_path)` returns findings. The CLI, the flake8 plugin and
the pre-commit hook are front-ends over it.
"""

from __future__ import annotations

from pathlib import Path

from tensorlint.findings import Applicability, Edit, Finding, Fix, Location

__version__ = "0.1.0"
__all__ = ["Applicability", "Edit", "Finding", "Fix", "Location", "__version__", "lint"]


def lint(target: str | Path, *, filename: str = "<string>", codes: frozenset[str] | None = None) -> list[Finding]:
    """Lint a file (a `Path`) or a source text (a `str`); all rules unless `codes` is given."""
    from tensorlint.engine import lint_file, lint_source

    if isinstance(target, Path):
        return lint_file(target, codes=codes)
    return lint_source(target, filename, codes=codes)
