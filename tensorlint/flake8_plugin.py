"""The flake8 front-end: `flake8 --select TL` reports what `tensorlint` reports.

flake8 owns selection and `# noqa` here, so the core runs every rule without its own noqa
filter; flake8 applies the same noqa syntax to the same lines. Columns are yielded 0-based,
as flake8 expects, so that flake8's printed column equals the CLI's. flake8 does not read
notebooks (and, named on its command line, would read their JSON as Python): those are left
to the CLI and the pre-commit hook. Opt-in rules are off by default here as in the CLI: they are
flake8's default ignores (like pycodestyle's W503), and `--extend-select TL018` turns one on.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import Any

from tensorlint import __version__
from tensorlint.engine import lint_source
from tensorlint.rules import OPT_IN_CODES
from tensorlint.source import NOTEBOOK_SUFFIX


class Flake8Checker:
    name = "tensorlint"
    version = __version__

    @classmethod
    def add_options(cls, parser: Any) -> None:  # flake8's OptionManager
        parser.extend_default_ignore(sorted(OPT_IN_CODES))

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str = "(none)") -> None:
        # flake8 classifies plugins by parameter names: `tree` makes this an AST plugin.
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if self.filename.endswith(NOTEBOOK_SUFFIX):
            return  # flake8 would hand over a notebook's JSON as if it were Python: the CLI lints notebooks
        source = "".join(self.lines)
        for finding in lint_source(source, self.filename, apply_noqa=False):
            if finding.code is None:
                continue  # flake8 reports unparsable files itself (E999); never abort its run
            yield finding.location.row, finding.location.column - 1, f"{finding.code} {finding.message}", type(self)
