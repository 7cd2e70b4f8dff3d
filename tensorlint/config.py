"""`[tool.tensorlint]` in pyproject.toml, and which codes apply to which file."""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

from tensorlint.rules import all_codes

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox",
    ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", "__pycache__",
)  # fmt: skip
KNOWN_KEYS = frozenset(
    ["select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "respect-gitignore", "verify"]
)  # `verify` is read by tensorlint.verify.cli


class ConfigError(Exception):
    """A configuration that cannot be used; the message says what and where."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("TL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    respect_gitignore: bool = True
    root: Path = field(default_factory=Path.cwd)  # paths in the config are relative to it
    source: Path | None = None  # the pyproject.toml it came from

    def codes_for(self, path: Path | None) -> frozenset[str]:
        """The rule codes that apply to a file, after select, ignore and per-file-ignores."""
        codes = expand(self.select) - expand(self.ignore)
        if path is not None:
            relative = self.relative(path)
            for pattern, ignored in self.per_file_ignores.items():
                if matches(relative, pattern):
                    codes -= expand(ignored)
        return codes

    def relative(self, path: Path) -> PurePosixPath:
        # Only components below the root count: a checkout inside a folder named `build`
        # must not exclude itself.
        try:
            return PurePosixPath(path.resolve().relative_to(self.root.resolve()).as_posix())
        except ValueError:
            return PurePosixPath(path.name)

    def is_excluded(self, path: Path) -> bool:
        relative = self.relative(path)
        return any(matches(relative, p) for p in (*self.exclude, *self.extend_exclude))


def expand(selectors: Iterable[str]) -> frozenset[str]:
    """Codes named by selectors: a full code, a prefix (`TL`, `TL00`), or `ALL`."""
    codes = all_codes()
    chosen: set[str] = set()
    for selector in selectors:
        selector = selector.strip().upper()
        if selector == "ALL":
            chosen |= codes
        else:
            chosen |= {c for c in codes if c.startswith(selector)}
    return frozenset(chosen)


def validate_selectors(selectors: Iterable[str], where: str) -> tuple[str, ...]:
    result = []
    for selector in selectors:
        selector = selector.strip().upper()
        if not selector:
            continue
        if selector != "ALL" and not any(c.startswith(selector) for c in all_codes()):
            known = ", ".join(sorted(all_codes()))
            raise ConfigError(f"{where}: unknown rule selector {selector!r} (known codes: {known})")
        result.append(selector)
    return tuple(result)


def matches(relative: PurePosixPath, pattern: str) -> bool:
    """ruff-style: a pattern without `/` matches any path component; with one, the path."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in relative.parts)
    text = relative.as_posix()
    return (
        fnmatch.fnmatchcase(text, pattern)
        or fnmatch.fnmatchcase(text, pattern + "/*")
        or any(fnmatch.fnmatchcase(str(parent), pattern) for parent in relative.parents)
    )


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml, upward from `start`, that has a [tool.tensorlint] table."""
    for directory in [start, *start.parents]:
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and "tensorlint" in _tool_tables(candidate):
            return candidate
    return None


def _tool_tables(path: Path) -> dict[str, object]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read TOML: {error}") from error
    tool = data.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    table = _tool_tables(pyproject).get("tensorlint", {})
    where = f"{pyproject} [tool.tensorlint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(KNOWN_KEYS))})"
        )
    per_file: dict[str, tuple[str, ...]] = {}
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of pattern = [codes]")
    for pattern, codes in raw_per_file.items():
        per_file[pattern] = validate_selectors(_strings(codes, f"{where} per-file-ignores.{pattern}"), where)
    respect = table.get("respect-gitignore", True)
    if not isinstance(respect, bool):
        raise ConfigError(f"{where}: respect-gitignore must be true or false")
    return Config(
        select=validate_selectors(_strings(table.get("select", ["TL"]), f"{where} select"), where),
        ignore=validate_selectors(_strings(table.get("ignore", []), f"{where} ignore"), where),
        exclude=_strings(table.get("exclude", list(DEFAULT_EXCLUDE)), f"{where} exclude"),
        extend_exclude=_strings(table.get("extend-exclude", []), f"{where} extend-exclude"),
        per_file_ignores=per_file,
        respect_gitignore=respect,
        root=pyproject.parent,
        source=pyproject,
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: must be a list of strings")
    return tuple(value)
