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
class CellLocation:
    """Where a finding in a notebook lies: its cell, the place in the cell, and in the .ipynb text."""

    cell: int  # 1-based position among all the notebook's cells, markdown included (as ruff counts)
    location: Location  # row and column in the cell
    end_location: Location
    file_location: Location  # in the .ipynb file's JSON text: for tools that only know files
    file_end_location: Location


@dataclass(frozen=True)
class Finding:
    """One reported problem. `code` is None for a file that could not be checked.

    `location` is a row of the linted module; in a notebook that module is its code cells one
    after the other, and `cell` says where that row lies in the notebook.
    """

    code: str | None
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = field(default=None, compare=False)
    cell: CellLocation | None = field(default=None, compare=False)

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.filename, self.location.row, self.location.column, self.code or "")

    @property
    def position(self) -> str:
        """`row:col`, or `cell N:row:col` in a notebook, as ruff prints them."""
        if self.cell is None:
            return f"{self.location.row}:{self.location.column}"
        return f"cell {self.cell.cell}:{self.cell.location.row}:{self.cell.location.column}"

    @property
    def file_location(self) -> Location:
        """The place in the file as stored on disk (the JSON text, for a notebook)."""
        return self.cell.file_location if self.cell else self.location

    @property
    def file_end_location(self) -> Location:
        return self.cell.file_end_location if self.cell else self.end_location


def applicable(finding: Finding, unsafe: bool) -> bool:
    """Whether `--fix` applies the finding's fix (unsafe ones only with `--unsafe-fixes`)."""
    fix = finding.fix
    return fix is not None and (fix.applicability is Applicability.SAFE or unsafe)
