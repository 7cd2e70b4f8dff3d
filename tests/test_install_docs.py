"""What the README, the docs and the changelog say about installing holds in this repository: the
version, the one project URL, the pre-commit revisions, and the README's sample output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, run_module
from tensorlint import __version__
from tensorlint.project import PROJECT_URL
from tensorlint.rules import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
URL = re.compile(r"https?://[^\s\"'`<>()\[\]]*")
REV = re.compile(r"^\s*rev:\s*([^\s#]+)", re.M)  # pre-commit's `rev:`
PINNED_URL = re.compile(r"git\+https?://[^\s\"'`@]+@([^\s\"'`#]+)")  # pip's `git+URL@rev`


def test_the_changelog_starts_with_the_package_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[(?P<version>[^\]]+)\]", changelog, re.M)
    assert first is not None
    assert first["version"] == __version__ == PYPROJECT["project"]["version"]


def test_pyproject_names_the_one_project_url_the_code_uses() -> None:
    assert list(PYPROJECT["project"]["urls"].values()) == [PROJECT_URL]
    copies = [p for p in (ROOT / "tensorlint").rglob("*.py") if PROJECT_URL in p.read_text(encoding="utf-8")]
    assert copies == [ROOT / "tensorlint" / "project.py"]  # everything else imports it from there


def test_rule_links_lead_to_the_rule_pages_of_this_repository() -> None:
    for rule in all_rules():
        page = rule.url().removeprefix(f"{PROJECT_URL}/blob/main/")
        assert page != rule.url() and (ROOT / page).is_file(), rule.url()


def test_every_link_to_the_project_uses_the_project_url() -> None:
    texts = [*DOCS, ROOT / ".pre-commit-hooks.yaml", *sorted((ROOT / "tensorlint").rglob("*.py"))]
    strays = [
        (path.relative_to(ROOT).as_posix(), url)
        for path in texts
        for url in URL.findall(path.read_text(encoding="utf-8"))
        if "tensorlint" in url and url.rstrip(".,:;") != PROJECT_URL and not url.startswith(f"{PROJECT_URL}/")
    ]
    assert not strays


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_every_revision_the_docs_name_is_in_this_repositorys_history() -> None:
    if shutil.which("git") is None or _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone lacks older commits")
    revisions = {
        (path.relative_to(ROOT).as_posix(), rev)
        for path in DOCS
        for pattern in (REV, PINNED_URL)
        for rev in pattern.findall(path.read_text(encoding="utf-8"))
    }
    assert {path for path, _ in revisions} >= {"README.md", "docs/ci.md"}  # the pre-commit snippets
    for path, rev in sorted(revisions):
        assert _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode == 0, f"{path}: {rev}"
        # on this branch (after a merge: on main), and a revision where the hook exists
        assert _git("merge-base", "--is-ancestor", rev, "HEAD").returncode == 0, f"{path}: {rev} is not in HEAD"
        assert "id: tensorlint" in _git("show", f"{rev}:.pre-commit-hooks.yaml").stdout, f"{path}: {rev}"


def test_the_readme_sample_output_is_a_real_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"```text\n\$ tensorlint examples/leaky_training.py\n(?P<output>.*?)```", readme, re.S)
    assert sample is not None
    run = run_module("tensorlint", "examples/leaky_training.py", cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})
    assert sample["output"] == run.stdout, f"paste the output of `tensorlint examples/leaky_training.py`:\n{run.stdout}"
