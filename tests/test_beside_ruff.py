"""docs/ci.md's "Beside ruff", checked against the ruff that constraints.txt pins: what ruff does
with a `# noqa` comment that holds tensorlint's codes, with and without `lint.external`."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_module

SHARED = "x = 1  # noqa: E501, TL004\n"  # E501: a ruff code that suppresses nothing here


def ruff(tmp_path: Path, *args: str) -> str:
    (tmp_path / "shared.py").write_text(SHARED, encoding="utf-8")
    result = run_module(
        "ruff", "check", "--isolated", "--no-cache", "--output-format", "concise", *args, "shared.py", cwd=tmp_path
    )
    return result.stdout


@pytest.fixture(autouse=True)
def _ruff_0_16_or_later() -> None:
    pytest.importorskip("ruff")
    version = run_module("ruff", "--version").stdout.split()[1]
    if tuple(int(part) for part in version.split(".")[:2]) < (0, 16):
        pytest.skip(f"docs/ci.md's last row is about ruff 0.16 and later, not {version}")


def test_without_external_ruff_flags_the_tl_codes_and_removes_a_shared_comment_whole(tmp_path: Path) -> None:
    unused = ruff(tmp_path, "--select", "RUF100")
    assert "RUF100" in unused and "E501" in unused and "TL004" not in unused  # RUF100 ignores codes it does not know
    assert "Invalid rule code in `# noqa`: TL004" in ruff(tmp_path, "--select", "RUF102")
    assert "RUF100" in ruff(tmp_path)  # in ruff's default rule set since 0.16.0
    ruff(tmp_path, "--select", "RUF100", "--fix")
    assert (tmp_path / "shared.py").read_text(encoding="utf-8") == "x = 1\n"  # TL004 went with E501


def test_with_external_ruff_keeps_the_tl_codes(tmp_path: Path) -> None:
    external = ["--config", 'lint.external = ["TL"]']
    assert "TL004" not in ruff(tmp_path, *external, "--select", "RUF100,RUF102")
    ruff(tmp_path, *external, "--select", "RUF100", "--fix")
    assert (tmp_path / "shared.py").read_text(encoding="utf-8") == "x = 1  # noqa: TL004\n"
