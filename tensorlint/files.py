"""Finding the files to lint: recursion, excludes, and .gitignore."""

from __future__ import annotations

import errno
import functools
import glob
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tensorlint.config import Config
from tensorlint.source import NOTEBOOK_SUFFIX, file_kind  # notebooks: linted too, unless `notebooks = false`

if TYPE_CHECKING:
    import pathspec

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Missing:
    """A path named on the command line that does not exist."""

    path: Path


@dataclass(frozen=True)
class Skipped:
    """A path with a Python name that cannot be read as a file: a FIFO, a device, a broken link."""

    path: Path
    reason: str


class _GitIgnores:
    """The .gitignore files of a git work tree, from its root down, read once each."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def ignored(self, path: Path, is_dir: bool) -> bool:
        root = _git_root(path.parent)
        if root is None:
            return False
        directory = path.parent
        chain = [directory, *directory.parents]
        for folder in chain[: chain.index(root) + 1] if root in chain else []:
            spec = self._spec(folder)
            if spec is None:
                continue
            relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            if spec.match_file(relative):
                return True
        return False

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            ignore = folder / ".gitignore"
            spec = None
            if ignore.is_file():
                import pathspec  # here: a tree without a .gitignore never needs it

                try:
                    lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = pathspec.GitIgnoreSpec.from_lines(lines)
                except OSError:
                    spec = None
            self._specs[folder] = spec
        return self._specs[folder]


@functools.cache
def _git_root(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        if (directory / ".git").exists():
            return directory
    return None


ConfigFor = Callable[[Path], Config]  # the configuration that governs a path


def discover(
    paths: list[Path], config: Config | ConfigFor, *, force_exclude: bool = False
) -> Iterator[Path | Missing | Skipped]:
    """Python files (and notebooks) under `paths`, in a stable order.

    `config` is one configuration, or a function giving each path its own (the nearest
    pyproject.toml), whose excludes then apply below it. As in ruff, a file named on the
    command line is linted even when excluded, unless `force_exclude` (what pre-commit hooks
    want, since pre-commit names every file).
    """
    config_for = config if callable(config) else _always(config)
    gitignores = _GitIgnores()
    seen: set[Path] = set()
    for path in paths:
        if not path.exists() and not path.is_symlink():
            yield Missing(path)
            continue
        if path.is_dir():
            yield from _walk(path, config_for, gitignores, seen)
        elif path.absolute() not in seen and not (
            force_exclude and _skipped(path.absolute(), config_for, gitignores, is_dir=False)
        ):
            seen.add(path.absolute())
            yield _regular(path)


def _always(config: Config) -> ConfigFor:
    return lambda _path: config


def _walk(root: Path, config: ConfigFor, gitignores: _GitIgnores, seen: set[Path]) -> Iterator[Path | Skipped]:
    """Walk `root` as the user spelled it, so that reported paths read as they were given."""
    for directory, dirnames, filenames in os.walk(root):
        folder = Path(directory)
        absolute = folder.absolute()
        dirnames[:] = sorted(d for d in dirnames if not _skipped(absolute / d, config, gitignores, is_dir=True))
        for name in sorted(filenames):
            file = absolute / name
            if (
                (name.endswith(PYTHON_SUFFIXES) or (name.endswith(NOTEBOOK_SUFFIX) and config(file).notebooks))
                and file not in seen
                and not _skipped(file, config, gitignores, is_dir=False)
            ):
                seen.add(file)
                yield _regular(folder / name)


def _regular(path: Path) -> Path | Skipped:
    """The path, or why it is skipped: reading a FIFO or a device would block or never end."""
    try:
        mode = path.stat().st_mode  # follows links: a link to a regular file is linted
    except OSError as error:
        reason = "a broken symbolic link" if path.is_symlink() and error.errno == errno.ENOENT else error.strerror
        return Skipped(path, reason or str(error))
    return path if stat.S_ISREG(mode) else Skipped(path, f"not a regular file ({file_kind(mode)})")


def _skipped(path: Path, config_for: ConfigFor, gitignores: _GitIgnores, *, is_dir: bool) -> bool:
    config = config_for(path)
    if config.is_excluded(path):
        return True
    if not is_dir and path.suffix == NOTEBOOK_SUFFIX and not config.notebooks:
        return True  # with --force-exclude, `notebooks = false` holds for notebooks pre-commit names
    return config.respect_gitignore and gitignores.ignored(path, is_dir)


TEMPORARY_SUFFIX = ".tensorlint"


def write_atomically(path: Path, text: str, encoding: str) -> None:
    """Write through a temporary file in the same folder, then rename: never a half-written file.

    A symbolic link stays a link: the file it points to is replaced. A temporary file that a
    killed run left beside this one is removed first.
    """
    import tempfile  # here: only --fix and --add-noqa write files (tempfile imports shutil, random, ...)

    path = path.resolve()
    mode = path.stat().st_mode
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*{TEMPORARY_SUFFIX}"):
        leftover.unlink(missing_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX)
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())  # on disk before the rename makes it the file
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
