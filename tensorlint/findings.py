"""What every rule reports and every front-end prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Applicability(str, Enum):
    """How safe a fix is, in ruff's terms."""

    SAFE = "safe"  # keeps behaviour
    UNSAFE = "unsafe"  # changes a type or a lifetime: applied only when asked for


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based row and a 1-based column counted in characters, as ruff prints them."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between two locations with `content`."""

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Finding:
    """One reported problem. `code` is None for a file that could not be checked."""

    code: str | None
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = field(default=None, compare=False)

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.filename, self.location.row, self.location.column, self.code or "")


def applicable(finding: Finding, unsafe: bool) -> bool:
    """Whether `--fix` applies the finding's fix (unsafe ones only with `--unsafe-fixes`)."""
    fix = finding.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)
