"""Fixes: each rule's fix turns `fixtures/fixes/*.in.py` into `*.out.py`, once and for all."""

from __future__ import annotations

import importlib.util
import stat
import types
from pathlib import Path

import pytest

import tensorlint.fixes
from helpers import FIXTURES, run_tensorlint
from samples import FIXED, LEAKY, LEAKY_LINE
from tensorlint.engine import lint_source
from tensorlint.findings import Applicability, Edit, Finding, Fix, Location
from tensorlint.fixes import fix_source
from tensorlint.rule import Rule, dedent
from tensorlint.rules import all_rules

PAIRS = sorted((FIXTURES / "fixes").glob("*.in.py"))


def _expected(path: Path) -> str:
    return path.with_name(path.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")


@pytest.mark.parametrize("before", PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_fix_turns_input_into_expected_output(before: Path) -> None:
    result = fix_source(before.read_text(encoding="utf-8"), str(before), unsafe=True)
    assert result.refused is None
    assert result.source == _expected(before)
    assert result.fixed and not result.remaining


@pytest.mark.parametrize("before", PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_fix_is_idempotent(before: Path) -> None:
    after = _expected(before)
    again = fix_source(after, str(before), unsafe=True)
    assert again.source == after and not again.fixed


SAFE_PAIRS = [p for p in PAIRS if p.name.startswith("TL900")]  # TL900's fix only removes a comment
UNSAFE_PAIRS = [p for p in PAIRS if p not in SAFE_PAIRS]


@pytest.mark.parametrize("before", SAFE_PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_safe_fixes_apply_without_asking(before: Path) -> None:
    assert fix_source(before.read_text(encoding="utf-8"), str(before)).source == _expected(before)


@pytest.mark.parametrize("before", UNSAFE_PAIRS, ids=lambda p: p.name.removesuffix(".in.py"))
def test_unsafe_fixes_are_not_applied_without_asking(before: Path) -> None:
    source = before.read_text(encoding="utf-8")
    result = fix_source(source, str(before))
    assert result.source == source and not result.fixed
    assert all(f.fix is not None and f.fix.applicability is Applicability.UNSAFE for f in result.remaining)


@pytest.mark.parametrize("rule", [r for r in all_rules() if r.fix_availability != "None"], ids=lambda r: r.code)
def test_every_rule_with_a_fix_has_a_fix_fixture(rule: type[Rule]) -> None:
    assert any(p.name.startswith(rule.code) for p in PAIRS)


def test_a_fix_whose_result_does_not_parse_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "import torch\nx = torch.zeros(3)\n"
    broken = Fix("break it", Applicability.SAFE, (Edit("(", Location(2, 1), Location(2, 1)),))
    finding = Finding("TL004", "m", "x.py", Location(2, 1), Location(2, 2), broken)
    calls = iter([[finding], []])
    monkeypatch.setattr(tensorlint.fixes, "lint_source", lambda *a, **k: next(calls, []))
    result = fix_source(source, "x.py")
    assert result.source == source
    assert result.refused is not None and "parse" in result.refused


def test_fix_without_unsafe_fixes_changes_nothing_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text(LEAKY, encoding="utf-8")
    result = run_tensorlint("--fix", "leaky.py", cwd=tmp_path)
    assert (tmp_path / "leaky.py").read_text(encoding="utf-8") == LEAKY
    assert result.returncode == 1
    assert result.stdout.splitlines()[-2:] == ["Found 1 error.", "1 unsafe fix available with `--fix --unsafe-fixes`."]


def test_unsafe_fix_writes_the_file_and_exits_0_when_nothing_remains(tmp_path: Path) -> None:
    path = tmp_path / "leaky.py"
    path.write_text(LEAKY, encoding="utf-8")
    path.chmod(0o640)
    result = run_tensorlint("--fix", "--unsafe-fixes", "leaky.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == FIXED
    assert "(1 fixed, 0 remaining)" in result.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leaky.py"]  # no temporary file left
    again = run_tensorlint("--fix", "--unsafe-fixes", "leaky.py", cwd=tmp_path)
    assert again.returncode == 0 and path.read_text(encoding="utf-8") == FIXED


def test_exit_non_zero_on_fix(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text(LEAKY, encoding="utf-8")
    assert run_tensorlint("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "leaky.py", cwd=tmp_path).returncode == 1


@pytest.mark.parametrize(
    ("encoding", "newline"), [("utf-8", "\r\n"), ("utf-8-sig", "\n"), ("latin-1", "\n")], ids=["crlf", "bom", "latin-1"]
)
def test_fix_keeps_encoding_and_line_endings(tmp_path: Path, encoding: str, newline: str) -> None:
    header = "# -*- coding: latin-1 -*-\n# café\n" if encoding == "latin-1" else ""
    path = tmp_path / "leaky.py"
    path.write_bytes((header + LEAKY).replace("\n", newline).encode(encoding))
    assert run_tensorlint("--fix", "--unsafe-fixes", "leaky.py", cwd=tmp_path).returncode == 0
    assert path.read_bytes() == (header + FIXED).replace("\n", newline).encode(encoding)


def test_diff_prints_the_fix_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "leaky.py").write_text(LEAKY, encoding="utf-8")
    result = run_tensorlint("--diff", "--unsafe-fixes", "leaky.py", cwd=tmp_path)
    assert result.returncode == 1
    assert f"-{LEAKY_LINE}\n" in result.stdout
    assert "+    with torch.no_grad():\n" in result.stdout and f"+    {LEAKY_LINE}\n" in result.stdout
    assert (tmp_path / "leaky.py").read_text(encoding="utf-8") == LEAKY
    (tmp_path / "leaky.py").write_text(FIXED, encoding="utf-8")
    assert run_tensorlint("--diff", "--unsafe-fixes", "leaky.py", cwd=tmp_path).returncode == 0


def test_fix_of_stdin_prints_the_fixed_source(tmp_path: Path) -> None:
    result = run_tensorlint("--fix", "--unsafe-fixes", "-", "--stdin-filename", "leaky.py", cwd=tmp_path, stdin=LEAKY)
    assert result.stdout == FIXED
    assert result.returncode == 0


# TL004 in loops that train or hand control back: the loop is left as it is, the value is fixed.
NOT_WRAPPED = {
    "optimizer_step": """
        def train(model, loader, optimizer):
            total = 0.0
            for x, y in loader:
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.step()
                total += loss
            return total
        """,
    "helper_that_trains": """
        def train_step(model, x, y, optimizer):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            return loss

        def train(model, loader, optimizer):
            total = 0.0
            for x, y in loader:
                total += train_step(model, x, y, optimizer)
            return total
        """,
    "method_that_trains": """
        class Trainer:
            def fit_batch(self, x, y):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                return loss

            def fit(self, loader):
                losses = []
                for x, y in loader:
                    losses.append(self.fit_batch(x, y))
                return losses
        """,
    "generator": """
        def running_losses(model, val_loader):
            total = 0.0
            for x, y in val_loader:
                total += torch.nn.functional.mse_loss(model(x), y)
                yield total
        """,
    "async_for": """
        async def evaluate(model, val_loader):
            total = 0.0
            async for x, y in val_loader:
                total += torch.nn.functional.mse_loss(model(x), y)
            return total
        """,
    "await_in_loop": """
        async def evaluate(model, val_loader, queue):
            total = 0.0
            for x, y in val_loader:
                total += torch.nn.functional.mse_loss(model(x), y)
                await queue.put(x)
            return total
        """,
}


@pytest.mark.parametrize("source", NOT_WRAPPED.values(), ids=NOT_WRAPPED.keys())
def test_tl004_never_wraps_a_loop_that_trains_or_suspends_in_no_grad(source: str) -> None:
    findings = lint_source(f"import torch\n\n{dedent(source)}", "x.py")
    assert [f.code for f in findings] == ["TL004"]
    assert findings[0].fix is not None and findings[0].fix.message.startswith("Accumulate")


def test_the_no_grad_wrap_computes_the_same_total_without_a_graph() -> None:
    torch = pytest.importorskip("torch")
    pair = FIXTURES / "fixes" / "TL004_eval_loop_comments_nested.in.py"
    before, after = (_load(p) for p in (pair, pair.with_name(pair.name.replace(".in.py", ".out.py"))))
    torch.manual_seed(0)
    model, criterion = torch.nn.Linear(4, 3), torch.nn.CrossEntropyLoss()
    loader = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(4)]
    leaky, fixed = before.validate(model, loader, criterion), after.validate(model, loader, criterion)
    assert leaky.requires_grad and not fixed.requires_grad
    assert torch.allclose(leaky.detach(), fixed)
    assert torch.allclose(
        before.validate(model, loader, criterion, 2).detach(), after.validate(model, loader, criterion, 2)
    )


def _load(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.name.replace(".", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# States TL010 reports without a fix: `.detach()` would fail on `None` or a tuple, or the file cannot tell.
TL010_UNFIXED = {
    "started_as_none": "hidden = None",
    "started_by_init_hidden": "hidden = model.init_hidden(8)",
    "started_as_tuple": "hidden = (torch.zeros(1, 8, 4), torch.zeros(1, 8, 4))",
}


@pytest.mark.parametrize("start", TL010_UNFIXED.values(), ids=TL010_UNFIXED.keys())
def test_tl010_fixes_only_a_state_started_as_plain_tensors(start: str) -> None:
    loop = (
        "def train(model, loader, optimizer):\n"
        f"    {start}\n"
        "    for x, y in loader:\n"
        "        out, hidden = model(x, hidden)\n"
        "        torch.nn.functional.mse_loss(out, y).backward()\n"
        "        optimizer.step()\n"
    )
    findings = lint_source(f"import torch\n\n\n{loop}", "x.py")
    assert [f.code for f in findings] == ["TL010"]
    assert findings[0].fix is None
    started_as_zeros = lint_source(f"import torch\n\n\n{loop.replace(start, 'hidden = torch.zeros(1, 8, 4)')}", "x.py")
    assert started_as_zeros[0].fix is not None
