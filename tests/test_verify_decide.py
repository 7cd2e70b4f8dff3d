"""The verifier's decision rule and planning: plain Python, no torch needed."""

from __future__ import annotations

from pathlib import Path

from helpers import ROOT
from tensorlint.engine import lint_file
from tensorlint.verify.decide import decide, theil_sen
from tensorlint.verify.plan import Options, plan

KIB = 1024


def test_theil_sen_ignores_one_outlier() -> None:
    assert theil_sen([0, 10, 20, 1000, 40, 50]) == 10


def test_steady_growth_is_confirmed() -> None:
    decision = decide([i * 128 * KIB for i in range(21)], allocated_per_call=512 * KIB, graph_nodes=[0] * 21)
    assert decision.verdict == "confirmed"
    assert decision.slope == 128 * KIB
    assert decision.delta_fraction == 1.0


def test_bounded_cache_is_not_a_leak() -> None:
    live = [min(i, 8) * 128 * KIB for i in range(21)]  # deque(maxlen=8): flat after 8 calls
    decision = decide(live, allocated_per_call=512 * KIB, graph_nodes=[0] * 21)
    assert decision.verdict == "not reproduced"


def test_growth_below_the_threshold_is_noise() -> None:
    decision = decide([i * 100 for i in range(21)], allocated_per_call=512 * KIB, graph_nodes=[0] * 21)
    assert decision.verdict == "not reproduced"


def test_bytes_below_the_threshold_without_more_tensors_are_noise() -> None:
    """A storage that grows a little (a `resize_`) is noise in the byte total, not a kept tensor."""
    decision = decide([i * 100 for i in range(21)], 512 * KIB, [0] * 21, live_tensors=[1] * 21)
    assert decision.verdict == "not reproduced"


def test_one_more_live_tensor_per_call_is_a_leak_whatever_its_size() -> None:
    decision = decide([i * 128 for i in range(21)], 512 * KIB, [0] * 21, live_tensors=list(range(21)))
    assert decision.verdict == "confirmed" and decision.basis == "tensors"
    assert decision.slope == 128 and decision.tensor_slope == 1


def test_a_bounded_number_of_tensors_is_not_a_leak() -> None:
    counts = [min(i, 4) for i in range(21)]
    decision = decide([c * 128 for c in counts], 512 * KIB, [0] * 21, live_tensors=counts)
    assert decision.verdict == "not reproduced"


def test_graph_growth_without_bytes_is_host_only() -> None:
    decision = decide([0] * 21, allocated_per_call=512 * KIB, graph_nodes=[11 + 8 * i for i in range(21)])
    assert decision.verdict == "host-only"
    assert decision.node_slope == 8


def test_too_few_calls_is_inconclusive() -> None:
    assert decide([0, 1], allocated_per_call=0, graph_nodes=[0, 0]).verdict == "inconclusive"


def _plans(name: str, options: Options | None = None) -> list[tuple[str, str | None, str]]:
    path = ROOT / "fixtures" / "runtime" / name
    findings = [f for f in lint_file(path) if f.code]
    made = plan(Path(path), path.read_text(encoding="utf-8"), findings, options or Options())
    return [(p.label, p.job["kind"] if p.job else None, p.reason) for p in made]


def test_plans_drive_a_module_a_function_and_a_loop() -> None:
    assert _plans("tl001_feature_cache.py") == [("FeatureRecorder (train step)", "module", "")]
    assert _plans("tl002_closure_leaky.py") == [("register_step()", "call", "")]
    assert _plans("tl004_eval_total_loss.py") == [("evaluate() per loop iteration", "loop", "")]


def test_dataloader_findings_are_driven_by_the_function_that_iterates_the_loader() -> None:
    assert _plans("tl003_collate_cuda.py") == [("load_batches() iterating its DataLoader", "loader", "")]
    assert _plans("tl003_collate_cuda.py", Options(target="load_batches")) == [
        ("load_batches() iterating its DataLoader", "loader", "")
    ]


def test_a_method_of_a_plain_class_is_driven_by_a_function_that_calls_it() -> None:
    assert _plans("pool_del_loop_variable.py") == [("step(), calling release_all", "call", "")]


def test_what_nothing_in_the_file_reaches_needs_a_spec(tmp_path: Path) -> None:
    source = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def collate(batch):\n    return torch.stack(batch).cuda()\n\n\n"
        "def make_loader(dataset):\n    return DataLoader(dataset, num_workers=2, collate_fn=collate)\n"
    )
    path = tmp_path / "loader.py"
    path.write_text(source, encoding="utf-8")
    findings = [f for f in lint_file(path) if f.code]
    assert [f.code for f in findings] == ["TL003"]
    [made] = plan(path, source, findings, Options())
    assert made.job is None and made.reason.startswith("needs a spec: name the function that iterates")
    [made] = plan(path, source, findings, Options(entry="make_loader"))
    assert made.job is not None and made.job["kind"] == "loader"


def test_a_named_target_without_findings_is_driven() -> None:
    assert _plans("kept_exception.py", Options(target="step")) == [("step()", "call", "")]
    assert _plans("kept_exception.py", Options(target="nothing"))[0][2].startswith("needs a spec")
