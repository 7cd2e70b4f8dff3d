"""The pre-commit hook, run as users run it: `pre-commit try-repo` on a git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, run_module
from samples import FIXED, LEAKY, LEAKY_COLUMN, LEAKY_ROW

LEAKY_NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Evaluation"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": LEAKY.splitlines(True)},
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_hook_reports_the_leaky_file_and_notebook_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "leaky.py").write_text(LEAKY, encoding="utf-8")
    (repo / "clean.py").write_text(FIXED, encoding="utf-8")
    (repo / "leaky.ipynb").write_text(json.dumps(LEAKY_NOTEBOOK, indent=1), encoding="utf-8")
    clean_notebook = json.dumps(LEAKY_NOTEBOOK, indent=1).replace("model(x), y)", "model(x), y).item()")
    (repo / "clean.ipynb").write_text(clean_notebook, encoding="utf-8")
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    result = run_module("pre_commit", "try-repo", str(ROOT), "tensorlint", "--all-files", cwd=repo, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"leaky.py:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004" in output
    assert (
        f"leaky.ipynb:cell 2:{LEAKY_ROW}:{LEAKY_COLUMN}: TL004" in output
    )  # `types_or` names jupyter: notebooks reach the hook
    report = output.split("- hook id: tensorlint")[-1]
    assert "clean.py" not in report and "clean.ipynb" not in report
    assert "`args: [--fix, --unsafe-fixes]` in the tensorlint hook" in report  # a flag the hook user cannot pass
    assert "`--fix --unsafe-fixes`" not in report
