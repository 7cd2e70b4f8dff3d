"""The result cache: each file's findings, keyed by its content and what else decides them.

As ruff's `.ruff_cache`: one folder in the project root, one JSON store per build of the
linter (tensorlint's version and sources, LibCST's version, Python's version), and in it, per
file path, the hash of the file's bytes and selected codes beside the findings they gave. A
file whose hash matches is not parsed again, so an unchanged tree re-checks in about the time
it takes to read it. Findings are stored without their filename, so a cached finding is the
fresh one given the name it is reported under.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import tensorlint
from tensorlint.findings import Applicability, CellLocation, Edit, Finding, Fix, Location
from tensorlint.source import SETTINGS_SUFFIXES, read_regular_file, walk_project

CACHE_DIR_NAME = ".tensorlint_cache"
_FORMAT = 2  # bump when the stored shape changes


def default_cache_dir(project_root: Path) -> Path:
    """`TENSORLINT_CACHE_DIR`, else `.tensorlint_cache` in the project root."""
    override = os.environ.get("TENSORLINT_CACHE_DIR")
    return Path(override) if override else project_root / CACHE_DIR_NAME


def content_key(data: bytes, codes: Collection[str]) -> str:
    """What decides one file's findings besides the build: its bytes and the codes checked."""
    digest = hashlib.blake2b(",".join(sorted(codes)).encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


def build_fingerprint() -> str:
    """What decides every file's findings: the linter's code, its parser, and Python.

    The package's source files are fingerprinted by size and modification time, so that an
    edited (or reinstalled) tensorlint never reuses results of the old one.
    """
    package = Path(tensorlint.__file__).parent
    stats = sorted(
        f"{path.relative_to(package)}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in package.rglob("*.py")
    )
    parts = [str(_FORMAT), tensorlint.__version__, _libcst_release(), sys.version.split()[0], *stats]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def _libcst_release() -> str:
    """LibCST's `_version.py` (the version is in it), found without importing LibCST; its
    metadata's version if there is no such file. Importing importlib.metadata (and with it the
    `email` package) would add about 15 ms to every run, a cached one included."""
    spec = importlib.util.find_spec("libcst")  # a top-level package: found, not imported
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            return (Path(folder) / "_version.py").read_text(encoding="utf-8")
        except OSError:
            continue
    from importlib import metadata  # here: only a LibCST without `_version.py`

    try:
        return metadata.version("libcst")
    except metadata.PackageNotFoundError:  # pragma: no cover - libcst is a dependency
        return "unknown"


class ResultCache:
    """Findings per file path, loaded once, written back once (atomically) when changed."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.store = directory / f"results-{build_fingerprint()}.json"
        self._entries: dict[str, list[Any]] = self._load()
        self._changed = False

    def get(self, path: Path, key: str, filename: str) -> list[Finding] | None:
        entry = self._entries.get(str(path.absolute()))
        if entry is None or entry[0] != key:
            return None
        # The modules its imports resolved to: a change in one of them changes this file's findings.
        if any(_file_digest(Path(dependency)) != digest for dependency, digest in entry[2]):
            return None
        return [_finding(record, filename) for record in entry[1]]

    def put(self, path: Path, key: str, findings: list[Finding], dependencies: Collection[Path] = ()) -> None:
        depends = [[str(dependency), _file_digest(dependency)] for dependency in sorted(dependencies)]
        self._entries[str(path.absolute())] = [key, [_record(finding) for finding in findings], depends]
        self._changed = True

    def save(self) -> None:
        """Write the store if anything changed; a cache that cannot be written is skipped, not fatal."""
        if not self._changed:
            return
        import tempfile  # here: a run that changed nothing writes nothing (tempfile imports shutil, random, ...)

        try:
            self._prepare_directory()
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".results.", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(self._entries, stream, separators=(",", ":"))
            os.replace(temporary, self.store)
        except OSError:
            return
        self._changed = False

    def _load(self) -> dict[str, list[Any]]:
        try:
            entries = json.loads(self.store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def _prepare_directory(self) -> None:
        """As ruff: the folder ignores itself in git and is tagged as a cache for backup tools."""
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Automatically created by tensorlint.\n*\n", encoding="utf-8")
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")


def _file_digest(path: Path) -> str:
    if path.is_dir():
        return _folder_digest(path)
    try:
        return hashlib.blake2b(read_regular_file(path), digest_size=16).hexdigest()
    except OSError:
        return ""  # gone or unreadable: differs from any stored digest


_FOLDER_DIGESTS: dict[Path, str] = {}


def _folder_digest(folder: Path) -> str:
    """The Python modules (and settings files) below a folder, by path: a project a file's
    findings were read from (callers of its functions, owners that empty its lists, the settings
    its loaders read) changes when one is added or removed there. Once per process: a run does
    not see its tree change."""
    digest = _FOLDER_DIGESTS.get(folder)
    if digest is None:
        found = hashlib.blake2b(digest_size=16)
        for parent, _, files in walk_project(folder):
            for name in (f for f in files if f.endswith((".py", *SETTINGS_SUFFIXES))):
                found.update(os.path.join(parent, name).encode(errors="surrogateescape") + b"\0")
        digest = _FOLDER_DIGESTS[folder] = found.hexdigest()
    return digest


def _record(finding: Finding) -> list[Any]:
    fix = finding.fix
    stored_fix = None
    if fix is not None:
        edits = [[e.content, *_pair(e.location), *_pair(e.end_location)] for e in fix.edits]
        stored_fix = [fix.message, fix.applicability.value, edits]
    cell = finding.cell
    stored_cell = None
    if cell is not None:
        places = (cell.location, cell.end_location, cell.file_location, cell.file_end_location)
        stored_cell = [cell.cell, *(n for place in places for n in _pair(place))]
    return [
        finding.code,
        finding.message,
        *_pair(finding.location),
        *_pair(finding.end_location),
        stored_fix,
        stored_cell,
    ]


def _finding(record: list[Any], filename: str) -> Finding:
    code, message, row, column, end_row, end_column, stored_fix, stored_cell = record
    fix = None
    if stored_fix is not None:
        fix_message, applicability, edits = stored_fix
        fix = Fix(
            fix_message,
            Applicability(applicability),
            tuple(Edit(content, Location(r, c), Location(er, ec)) for content, r, c, er, ec in edits),
        )
    cell = None
    if stored_cell is not None:
        number, *places = stored_cell
        locations = [Location(places[i], places[i + 1]) for i in range(0, 8, 2)]
        cell = CellLocation(number, *locations)
    return Finding(code, message, filename, Location(row, column), Location(end_row, end_column), fix, cell)


def _pair(location: Location) -> tuple[int, int]:
    return location.row, location.column
