"""`[tool.tensorlint]` in pyproject.toml, and which codes apply to which file.

As in ruff, each file is governed by the closest pyproject.toml above it that has a
`[tool.tensorlint]` table (no merging between tables); `--config` and `--isolated` replace that
search with one configuration for every file.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tensorlint.rules import all_codes, default_codes

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox",
    ".venv", ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", "__pycache__",
)  # fmt: skip
KNOWN_KEYS = frozenset(
    [
        "select",
        "extend-select",
        "ignore",
        "exclude",
        "extend-exclude",
        "per-file-ignores",
        "respect-gitignore",
        "notebooks",
        "verify",
    ]
)  # `verify` is read by tensorlint.verify.cli


def default_selection() -> tuple[str, ...]:
    """The codes enabled when nothing is selected: every rule but the opt-in ones (like TL900)."""
    return default_codes()


class ConfigError(Exception):
    """A configuration that cannot be used; the message says what and where."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = field(default_factory=default_selection)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    respect_gitignore: bool = True
    notebooks: bool = True  # lint `.ipynb` files found in folders
    root: Path = field(default_factory=Path.cwd)  # paths in the config are relative to it
    source: Path | None = None  # the pyproject.toml it came from

    def codes_for(self, path: Path | None) -> frozenset[str]:
        """The rule codes that apply to a file: select, plus extend-select, minus ignore and per-file-ignores."""
        codes = self._selected_codes
        if path is not None and self.per_file_ignores:
            relative = self.relative(path)
            for pattern, ignored in self.per_file_ignores.items():
                if matches(relative, pattern):
                    codes -= expand(ignored)
        return codes

    def relative(self, path: Path) -> PurePosixPath:
        # Only components below the root count: a checkout inside a folder named `build`
        # must not exclude itself.
        try:  # realpath, not resolve(): a symbolic link loop must not raise
            return PurePosixPath(Path(os.path.realpath(path)).relative_to(self._resolved_root).as_posix())
        except ValueError:
            return PurePosixPath(path.name)

    def is_excluded(self, path: Path) -> bool:
        relative = self.relative(path)
        if any(self._component_excludes.match(part) for part in relative.parts):
            return True
        return any(matches(relative, p) for p in self._path_excludes)

    # Computed once per configuration, not once per file: discovery asks for every path.
    @functools.cached_property
    def _selected_codes(self) -> frozenset[str]:
        return (expand(self.select) | expand(self.extend_select)) - expand(self.ignore)

    @functools.cached_property
    def _resolved_root(self) -> Path:
        return self.root.resolve()

    @functools.cached_property
    def _component_excludes(self) -> re.Pattern[str]:
        """The patterns without `/` (they match any path component), as one expression."""
        patterns = [p.rstrip("/") for p in (*self.exclude, *self.extend_exclude) if "/" not in p.rstrip("/")]
        return re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)")

    @functools.cached_property
    def _path_excludes(self) -> tuple[str, ...]:
        return tuple(p for p in (*self.exclude, *self.extend_exclude) if "/" in p.rstrip("/"))


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
            hint = _suggestion(selector, all_codes())
            raise ConfigError(f"{where}: unknown rule selector {selector!r}{hint}; known codes: {known}")
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


def _suggestion(word: str, known: Iterable[str]) -> str:
    import difflib  # here: only a mistake needs it

    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml, upward from `start`, that has a [tool.tensorlint] table."""
    for directory in [start, *start.parents]:
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and "tensorlint" in tool_tables(candidate):
            return candidate
    return None


def tool_tables(path: Path) -> dict[str, object]:
    """A TOML file's `[tool]` tables (`tensorlint` among them), by name."""
    # Imported here: a run without a pyproject.toml (or with --isolated) never reads TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read TOML: {error}") from error
    tool = data.get("tool", {})
    return tool if isinstance(tool, dict) else {}


def load_config(pyproject: Path | None, *, root: Path | None = None) -> Config:
    """The configuration in a TOML file's [tool.tensorlint] table; paths relative to `root`
    (by default the file's folder)."""
    if pyproject is None:
        return Config()
    tables = tool_tables(pyproject)
    where = f"{pyproject} [tool.tensorlint]"
    if "tensorlint" not in tables:
        raise ConfigError(f"{pyproject}: no [tool.tensorlint] table")
    table = tables["tensorlint"]
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    unknown = [f"{key!r}{_suggestion(key, KNOWN_KEYS)}" for key in sorted(set(table) - KNOWN_KEYS)]
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(unknown)}; known keys: {', '.join(sorted(KNOWN_KEYS))}")
    per_file: dict[str, tuple[str, ...]] = {}
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"{where}: per-file-ignores must be a table of pattern = [codes]")
    for pattern, codes in raw_per_file.items():
        per_file[pattern] = validate_selectors(_strings(codes, f"{where} per-file-ignores.{pattern}"), where)
    respect = table.get("respect-gitignore", True)
    if not isinstance(respect, bool):
        raise ConfigError(f"{where}: respect-gitignore must be true or false")
    notebooks = table.get("notebooks", True)
    if not isinstance(notebooks, bool):
        raise ConfigError(f"{where}: notebooks must be true or false")
    select = table.get("select")
    return Config(
        select=default_selection()
        if select is None
        else validate_selectors(_strings(select, f"{where} select"), where),
        extend_select=validate_selectors(_strings(table.get("extend-select", []), f"{where} extend-select"), where),
        ignore=validate_selectors(_strings(table.get("ignore", []), f"{where} ignore"), where),
        exclude=_strings(table.get("exclude", list(DEFAULT_EXCLUDE)), f"{where} exclude"),
        extend_exclude=_strings(table.get("extend-exclude", []), f"{where} extend-exclude"),
        per_file_ignores=per_file,
        respect_gitignore=respect,
        notebooks=notebooks,
        root=root or pyproject.parent,
        source=pyproject,
    )


def _strings(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: must be a list of strings")
    return tuple(value)


class ConfigFinder:
    """Which configuration governs which path: the nearest [tool.tensorlint] table above it.

    A path with no such table above it gets `fallback` (the one found from the current
    directory, or the defaults). With `--config` or `--isolated`, `fallback` governs every path.
    """

    def __init__(self, fallback: Config, *, hierarchical: bool = True) -> None:
        self.fallback = fallback
        self.hierarchical = hierarchical
        self._by_folder: dict[Path, Config | None] = {}

    @classmethod
    def for_command_line(cls, config_file: Path | None, isolated: bool) -> ConfigFinder:
        if isolated:
            return cls(Config(), hierarchical=False)
        if config_file is not None:
            if not config_file.is_file():
                raise ConfigError(f"--config: {config_file}: no such file")
            # As in ruff: relative paths in a file given by --config are relative to the current directory.
            return cls(load_config(config_file, root=Path.cwd()), hierarchical=False)
        return cls(load_config(find_pyproject(Path.cwd())))

    def __call__(self, path: Path) -> Config:
        if not self.hierarchical:
            return self.fallback
        return self._nearest(path.absolute().parent) or self.fallback

    def _nearest(self, folder: Path) -> Config | None:
        if folder not in self._by_folder:
            candidate = folder / "pyproject.toml"
            if candidate.is_file() and "tensorlint" in tool_tables(candidate):
                self._by_folder[folder] = load_config(candidate)
            else:
                self._by_folder[folder] = None if folder.parent == folder else self._nearest(folder.parent)
        return self._by_folder[folder]
