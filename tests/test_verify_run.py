"""`tensorlint verify --run SCRIPT`: a whole training script watched step by step.

The example scripts (examples/run/) each have one leak, and a fixed twin. The scripts are run
in-process here (one torch import for all), as the subprocess runs them; one test goes through
the command line for the output, the arguments and the exit status. The scripts follow the
device, so on a GPU the same expectations hold on CUDA (only the device label differs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import ROOT, run_tensorlint
from runtime_cases import on_device

pytest.importorskip("torch")

EXAMPLES = ROOT / "examples" / "run"
STEPS = 20  # the fixed TL001 fills its deque(maxlen=8) within the first half: then it is flat

# (script, verdict, holder the verdict names, the finding a growing holder confirms)
LEAKY = [
    ("train_tl001_feature_cache.py", "confirmed", "Recorder.history (list", "TL001 at examples/run/train_tl001_feature_cache.py:21:9"),
    ("train_tl002_closure.py", "confirmed", "closure of register_probe.<locals>.<lambda> kept in global `callbacks`", "TL002 at examples/run/train_tl002_closure.py:14:22"),
    ("train_tl004_total_loss.py", "host-only", "autograd graph of local `total_loss` in main()", "TL004 at examples/run/train_tl004_total_loss.py:25:9"),
    ("eval_tl004_total_loss.py", "confirmed", "autograd graph of local `total_loss` in evaluate()", "TL004 at examples/run/eval_tl004_total_loss.py:18:9"),
    ("train_tl007_kept_exception.py", "confirmed", "traceback of ValueError kept in global `errors`", "TL007 at examples/run/train_tl007_kept_exception.py:30:13"),
]  # fmt: skip
FIXED = [name.replace(".py", "_fixed.py") for name, *_ in LEAKY]


def _watch(name: str, *args: str) -> tuple[str, object]:
    """The report, as `tensorlint verify --run examples/run/NAME --steps 20` prints it, and the verdict."""
    from tensorlint.engine import lint_file
    from tensorlint.verify import script_report
    from tensorlint.verify.drive import run

    path = EXAMPLES / name
    job = {"kind": "script", "file": str(path), "args": list(args), "steps": STEPS, "warmup": 3, "device": "auto"}
    verdict = run(job)
    relative = Path("examples/run") / name
    findings = [f for f in lint_file(relative) if f.code]
    found = script_report.growths(verdict, findings, path.read_text(encoding="utf-8"), relative)
    return script_report.text(str(relative), verdict, found, findings, []), verdict


@pytest.mark.parametrize(("name", "verdict", "holder", "finding"), LEAKY, ids=[c[0] for c in LEAKY])
def test_a_leaky_script_is_confirmed_with_its_holder_line_and_finding(
    name: str, verdict: str, holder: str, finding: str
) -> None:
    report, result = _watch(name)
    assert result.verdict == verdict, report  # type: ignore[attr-defined]
    assert result.device == on_device(cpu="cpu", cuda="cuda:0"), report  # type: ignore[attr-defined]
    assert holder in report and f"confirms {finding}" in report, report
    assert "not found statically" not in report, report
    assert f"stopped after {STEPS} " in report


@pytest.mark.parametrize("name", FIXED)
def test_its_fixed_twin_is_clean(name: str) -> None:
    report, result = _watch(name)
    assert result.verdict == "not reproduced", report  # type: ignore[attr-defined]
    assert "growing:" not in report


def test_growth_that_no_rule_reports_is_a_miss_to_report(tmp_path: Path) -> None:
    (tmp_path / "hidden.py").write_text(
        "import torch\n\nkept = {}\n\n\ndef remember(step, value):\n    kept[step] = value\n\n\n"
        "model = torch.nn.Linear(8, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(40):\n    out = model(torch.randn(4, 8)).sum()\n    out.backward()\n"
        "    optimizer.step()\n    remember(step, out.detach())\n",
        encoding="utf-8",
    )
    result = run_tensorlint("verify", "--run", "hidden.py", "--steps", "12", cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "not found statically: no finding of tensorlint points here (a miss to report)" in result.stdout


def test_the_command_line_keeps_the_scripts_output_arguments_and_exit(tmp_path: Path) -> None:
    result = run_tensorlint(
        "verify",
        "--run",
        "examples/run/train_tl001_feature_cache.py",
        "--steps",
        "12",
        "--",
        "--epochs",
        "3",
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert out.index("training for 3 epochs") < out.index(
        "tensorlint verify --run examples/run/train_tl001_feature_cache.py"
    )
    assert "the script was stopped after 12 optimizer steps" in out
    assert "live tensor memory" in out and "confirms TL001" in out


def test_json_has_every_step_and_the_script_output_goes_to_stderr() -> None:
    result = run_tensorlint(
        "verify", "--run", "examples/run/eval_tl004_total_loss_fixed.py", "--steps", "10", "--output-format", "json",
        timeout=300,
    )  # fmt: skip
    record = json.loads(result.stdout)
    assert record["runtime"]["verdict"] == "not reproduced" and record["runtime"]["mode"] == "DataLoader batch"
    assert len(record["runtime"]["series"]["bytes"]) == 10 - 3 + 1  # the baseline and each measured batch
    assert record["ending"] == "the script was stopped after 10 DataLoader batches"
    assert result.returncode == 0


@pytest.mark.parametrize(
    ("body", "ending"),
    [
        ("raise ValueError('bad config')\n", "the script raised ValueError: bad config (script.py:"),
        ("import sys\nsys.exit(3)\n", "the script exited with status 3"),
        ("print('nothing to train')\n", "the script ended (exit status 0)"),
    ],
)
def test_how_the_script_ended_is_reported(tmp_path: Path, body: str, ending: str) -> None:
    from tensorlint.verify.drive import run

    (tmp_path / "script.py").write_text("import torch\n\n" + body, encoding="utf-8")
    verdict = run({"kind": "script", "file": str(tmp_path / "script.py"), "steps": 10})
    assert verdict.ending.startswith(ending)
    assert verdict.verdict == "inconclusive" and "0 samples" in verdict.reason


def test_run_and_a_file_are_exclusive() -> None:
    result = run_tensorlint(
        "verify", "fixtures/runtime/kept_exception.py", "--run", "examples/run/train_tl002_closure.py"
    )
    assert result.returncode == 2 and "give PATH... or FILE::NAME, or --run SCRIPT" in result.stderr
