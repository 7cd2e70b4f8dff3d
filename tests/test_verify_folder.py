"""`tensorlint verify FOLDER` and `tensorlint check --verify`: check's files and findings, a verdict
under each finding, and only the files with findings run (one subprocess each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tensorlint.verify.cli
from helpers import FIXTURES, run_tensorlint
from samples import FIXED
from tensorlint.cli import main
from tensorlint.verify.runner import FileRun

pytest.importorskip("torch")

LEAK = "leaky.py:17:9: TL001 "


@pytest.fixture
def folder(project: Path) -> Path:
    """A leaky file, a clean one that uses torch, and one that has nothing to do with it."""
    (project / "models").mkdir()
    (project / "models" / "leaky.py").write_text((FIXTURES / "runtime" / "tl001_feature_cache.py").read_text())
    (project / "models" / "clean.py").write_text(FIXED)
    (project / "models" / "plain.py").write_text("print('no tensors here')\n")
    (project / "pyproject.toml").write_text('[tool.tensorlint.verify]\ncalls = 5\ndevice = "cpu"\n')
    return project


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[list[dict[str, Any]]]:
    """The jobs of every subprocess the verifier starts, one list per run."""
    started: list[list[dict[str, Any]]] = []
    real = tensorlint.verify.cli.run_jobs

    def recording(jobs: list[dict[str, Any]], *args: Any, **kwargs: Any) -> FileRun:
        started.append(jobs)
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(tensorlint.verify.cli, "run_jobs", recording)
    return started


def _check_the_report(out: str) -> None:
    report = out.partition("\n\nWarnings from the verified code")[0]  # torch's own, where numpy is missing
    finding, runtime, summary = report.splitlines()
    assert finding.startswith(f"models/{LEAK}")
    assert runtime.startswith("  runtime (FeatureRecorder (train step)): CONFIRMED on cpu: +16.0 KiB per call")
    assert "held by FeatureRecorder.features" in runtime
    assert summary == "Verified 1 finding: 1 confirmed."


def test_a_folder_runs_only_the_files_with_findings(
    folder: Path, runs: list[list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "models"]) == 1
    _check_the_report(capsys.readouterr().out)
    assert [{Path(job["file"]).name for job in jobs} for jobs in runs] == [{"leaky.py"}]


def test_check_verify_prints_the_same_report(
    folder: Path, runs: list[list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--verify", "models"]) == 1
    _check_the_report(capsys.readouterr().out)
    assert [{Path(job["file"]).name for job in jobs} for jobs in runs] == [{"leaky.py"}]


def test_several_paths_share_one_summary_and_one_json_list(
    folder: Path, runs: list[list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "second.py").write_text((FIXTURES / "runtime" / "tl001_feature_cache.py").read_text())
    assert main(["verify", "models/plain.py", "models", "second.py"]) == 1
    assert capsys.readouterr().out.splitlines()[4] == "Verified 2 findings in 2 files: 2 confirmed."
    assert len(runs) == 2  # one subprocess per file with findings
    assert main(["check", "--verify", "--output-format", "json", "."]) == 1
    records = json.loads(capsys.readouterr().out)
    assert [(r["filename"], r["code"], r["runtime"]["verdict"]) for r in records] == [
        ("models/leaky.py", "TL001", "confirmed"),
        ("second.py", "TL001", "confirmed"),
    ]


def test_a_folder_without_findings_starts_no_subprocess(
    folder: Path, runs: list[list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "models" / "leaky.py").unlink()
    assert main(["verify", "models"]) == 0
    assert capsys.readouterr().out == "Verified 0 findings.\n"
    assert main(["check", "--verify", "models"]) == 0
    assert runs == []


def test_what_verify_refuses(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "models/leaky.py::FeatureRecorder", "models/clean.py"])
    assert "FILE::NAME verifies one target of one file: give it alone" in capsys.readouterr().err
    assert main(["check", "--verify", "--fix", "models"]) == 2
    assert main(["check", "--verify", "--output-format", "github", "models"]) == 2
    assert main(["verify", "missing"]) == 2
    assert "missing: No such file or directory" in capsys.readouterr().err


def test_help_names_the_flag_and_the_folders() -> None:
    check = " ".join(run_tensorlint("check", "--help").stdout.split())  # argparse wraps to the terminal
    assert "--verify run the code behind each finding and print its runtime verdict under it" in check
    verify = " ".join(run_tensorlint("verify", "--help").stdout.split())
    assert "usage: tensorlint verify PATH... | FILE::NAME" in verify
    assert "only files with findings run" in verify
