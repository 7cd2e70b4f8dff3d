"""Fetch the real-world corpus: pinned packages by name with pip, unpacked outside the repository.

    python bench/corpus.py [--dest DIR]

Only the `.py` files are kept, one folder per package (`DIR/corpus/<name>-<version>/`). Wheels
give the library code (torch's own Python sources included); the sdists' `tests/` folders give
training-script style code (small models trained for a few steps). Nothing here is committed.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = Path(os.environ.get("TENSORLINT_BENCH_DIR", Path.home() / ".cache" / "tensorlint-bench"))


@dataclass(frozen=True)
class Source:
    name: str
    version: str
    sdist_tests: bool = False  # also unpack the sdist's tests/ folder (training-script style code)

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


PINNED = (
    Source("torch", "2.13.0"),
    Source("transformers", "5.24.0", sdist_tests=True),
    Source("timm", "1.0.31", sdist_tests=True),
    Source("lightning", "2.6.6"),
    Source("diffusers", "0.42.1"),
    Source("accelerate", "1.15.0", sdist_tests=True),
)


def pip_download(spec: str, downloads: Path, *, sdist: bool) -> Path:
    """One archive, no dependencies; torch through the project's constraints, never resolved freely."""
    kind = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *kind, "-d", str(downloads), spec]
    command += ["-c", str(ROOT / "constraints.txt")]
    subprocess.run(command, check=True)
    name, version = spec.split("==")
    suffixes = (".tar.gz", ".zip") if sdist else (".whl",)
    for archive in sorted(downloads.iterdir()):
        stem = archive.name.lower().replace("-", "_")
        if stem.startswith(f"{name}_{version}".lower()) and archive.name.endswith(suffixes):
            return archive
    raise FileNotFoundError(f"pip downloaded no {'sdist' if sdist else 'wheel'} for {spec} into {downloads}")


def unpack_wheel(archive: Path, target: Path) -> int:
    count = 0
    with zipfile.ZipFile(archive) as wheel:
        for member in wheel.namelist():
            if member.endswith(".py") and ".." not in member.split("/"):
                wheel.extract(member, target)
                count += 1
    return count


def unpack_sdist_tests(archive: Path, target: Path) -> int:
    count = 0
    with tarfile.open(archive) as sdist:
        for member in sdist.getmembers():
            parts = member.name.split("/")
            if member.isfile() and len(parts) > 2 and parts[1] == "tests" and member.name.endswith(".py"):
                member.name = "/".join(["tests", *parts[2:]])
                sdist.extract(member, target, filter="data")
                count += 1
    return count


def fetch(dest: Path) -> Path:
    downloads, corpus = dest / "downloads", dest / "corpus"
    downloads.mkdir(parents=True, exist_ok=True)
    for source in PINNED:
        target = corpus / source.folder
        if (target / ".complete").exists():
            continue
        spec = f"{source.name}=={source.version}"
        count = unpack_wheel(pip_download(spec, downloads, sdist=False), target)
        if source.sdist_tests:
            count += unpack_sdist_tests(pip_download(spec, downloads, sdist=True), target)
        (target / ".complete").write_text(f"{count}\n")
        print(f"{source.folder}: {count} .py files", file=sys.stderr)
    return corpus


def byte_compile(code: Path) -> None:
    """Write the `.pyc` files of the tensorlint checkout at `code`, as pip does when it installs a
    wheel: a timed run must not compile tensorlint's source. Without them every run compiles each
    module changed since the last run that could write them (none can under PYTHONDONTWRITEBYTECODE):
    0.1 s a run when no module has its `.pyc`, in a cold check of lightning that takes 1.5 s."""
    compileall.compile_dir(str(code / "tensorlint"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help=f"where to unpack (default {DEFAULT_DEST})")
    print(fetch(parser.parse_args().dest))


if __name__ == "__main__":
    main()
