"""What every writer needs besides the findings: source lines, colour, and the root for paths."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tensorlint.findings import Finding
from tensorlint.rule import Rule
from tensorlint.rules import rule_by_code
from tensorlint.text import split_lines


def escape(text: str) -> str:
    """Control characters in names or messages must not drive the terminal, nor break XML."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def use_colour(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Colour only on a terminal; NO_COLOR (https://no-color.org) wins over FORCE_COLOR."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass(frozen=True)
class OutputContext:
    source_of: Callable[[str], str | None] = lambda filename: None
    colour: bool = False
    root: Path = field(default_factory=Path.cwd)  # CI formats report paths relative to it

    def line(self, filename: str, row: int) -> str | None:
        """A physical line of the file, without its line ending; None when unavailable."""
        text = self.source_of(filename)
        lines = split_lines(text, keepends=True) if text is not None else []
        return lines[row - 1].rstrip("\r\n") if 0 < row <= len(lines) else None

    def relative_path(self, filename: str) -> str:
        """The path relative to the root, in `/` form; as given when it lies outside the root."""
        path = Path(filename)
        try:
            return path.absolute().relative_to(self.root.absolute()).as_posix()
        except ValueError:
            return path.as_posix()


def rule_of(finding: Finding) -> type[Rule] | None:
    return rule_by_code(finding.code) if finding.code else None


def severity(finding: Finding) -> str:
    """'error' or 'warning'; a file that could not be checked is an error."""
    rule = rule_of(finding)
    return rule.severity if rule else "error"
