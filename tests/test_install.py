"""docs/getting-started.md followed on a clean machine: build the wheel in a copy of the checkout,
install it into a fresh virtualenv, and run the quick start there (about 20 s: marked `install`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from samples import LEAKY, LEAKY_COLUMN, LEAKY_ROW
from tensorlint import __version__

pytestmark = pytest.mark.install

WHEEL = f"tensorlint-{__version__}-py3-none-any.whl"
GUIDE = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
# Nothing of this checkout or its virtualenv may leak into the fresh one.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=CLEAN_ENV, capture_output=True, text=True, check=False, timeout=300
    )


def copy_of_the_checkout(target: Path) -> Path:
    """What a clone holds: the tracked files and new ones not ignored (no .venv, build/ or caches)."""
    listed = run("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=ROOT)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the clone's files from build output")
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


def test_the_guide_names_the_commands_this_test_runs() -> None:
    assert "python3 -m build" in GUIDE
    assert f"pip install dist/{WHEEL}" in GUIDE


def test_a_wheel_built_as_the_guide_says_installs_and_runs_the_quick_start(tmp_path: Path) -> None:
    pytest.importorskip("build")  # the `test` extra brings it
    clone = copy_of_the_checkout(tmp_path / "clone")
    built = run(sys.executable, "-m", "build", cwd=clone)  # the guide's `python3 -m build`
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert (clone / "dist" / WHEEL).is_file(), sorted(p.name for p in (clone / "dist").iterdir())

    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", venv, cwd=tmp_path).returncode == 0
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    # the guide's `pip install dist/...whl`; constraints.txt keeps the dependencies at CI's versions
    installed = run(
        bin_dir / "python", "-m", "pip", "install", "-c", ROOT / "constraints.txt", f"dist/{WHEEL}", cwd=clone
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(LEAKY, encoding="utf-8")
    where = run(bin_dir / "python", "-c", "import tensorlint; print(tensorlint.__file__)", cwd=project)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    assert run(bin_dir / "tensorlint", "--version", cwd=project).stdout == f"tensorlint {__version__}\n"
    quick_start = run(bin_dir / "tensorlint", "src/", cwd=project)  # the guide's first command
    assert quick_start.returncode == 1, quick_start.stdout + quick_start.stderr
    assert quick_start.stdout.startswith(f"src/train.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 ")
    assert run(bin_dir / "tensorlint", "rule", "TL004", cwd=project).stdout.startswith("# graph-accumulated-in-loop")
    flake8 = run(bin_dir / "flake8", "--select", "TL", "src/", cwd=project)  # the plugin's entry point came along
    assert f"src/train.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004 " in flake8.stdout, flake8.stdout + flake8.stderr
