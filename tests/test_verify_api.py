"""`tensorlint.verify(step)`, `tensorlint.watch()` and the pytest plugin."""

from __future__ import annotations

import pytest

import tensorlint

torch = pytest.importorskip("torch")
pytest_plugins = ["pytester"]


def test_verify_confirms_an_unbounded_cache_and_names_it() -> None:
    cache: list[object] = []
    verdict = tensorlint.verify(lambda: cache.append(torch.ones(32, 32)), calls=8, warmup=2)
    assert verdict.verdict == "confirmed"
    assert verdict.bytes_per_call == 32 * 32 * 4
    assert verdict.deltas == (4096,) * 8
    assert verdict.holders and verdict.holders[0].tensors == 8


def test_verify_passes_a_clean_step() -> None:
    weight = torch.randn(16, 16, requires_grad=True)
    verdict = tensorlint.verify(lambda: (weight @ weight).sum().backward(), calls=8, warmup=2)
    assert verdict.verdict == "not reproduced"
    assert not verdict.leaks


def test_watch_samples_each_tick() -> None:
    kept = []
    with tensorlint.watch(warmup=2) as watch:
        for _ in range(10):
            kept.append(torch.zeros(1024))
            watch.tick()
    assert watch.verdict is not None
    assert watch.verdict.verdict == "confirmed" and watch.verdict.bytes_per_call == 4096


def test_pytest_marker_fails_a_leaking_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest, torch

        CACHE = []

        @pytest.fixture
        def model():
            return torch.nn.Linear(256, 256)

        @pytest.mark.no_tensor_leak(calls=8)
        def test_leaks(model):
            CACHE.append(model(torch.randn(8, 256)))

        @pytest.mark.no_tensor_leak(calls=8)
        def test_clean(model):
            model(torch.randn(8, 256)).sum().backward()

        def test_fixture(tensor_leak):
            tensor_leak.check(lambda: CACHE.append(torch.zeros(1024)), calls=8)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")  # the plugin loads through pytest11
    result.assert_outcomes(passed=1, failed=2)
    # The model and the inputs are made on the CPU: "on cpu" on every machine, a GPU one too.
    result.stdout.fnmatch_lines(["*TensorLeakError: tensor leak: CONFIRMED on cpu: +16.0 KiB per call over 8 calls*"])


def test_one_small_tensor_more_per_call_is_a_leak_whatever_its_size() -> None:
    cache: list[object] = []
    verdict = tensorlint.verify(lambda: cache.append(torch.ones(4)), calls=8, warmup=2)
    assert verdict.verdict == "confirmed" and verdict.basis == "tensors"
    assert verdict.bytes_per_call == 16 and verdict.tensors_per_call == 1
    assert "+16 B per call over 8 calls (+1 tensor per call, 8/8 grew)" in verdict.describe()


def test_a_bounded_set_of_small_tensors_is_not_a_leak() -> None:
    from collections import deque

    recent: deque[object] = deque(maxlen=3)
    verdict = tensorlint.verify(lambda: recent.append(torch.ones(4)), calls=10, warmup=0)
    assert verdict.verdict == "not reproduced", verdict.describe()


def test_the_device_named_is_where_the_code_ran() -> None:
    """Asked for CUDA, code that allocates on the CPU says `cpu`; code that allocates nothing names no device."""
    weight = torch.randn(16, 16)
    on_cpu = tensorlint.verify(lambda: weight @ weight, calls=4, warmup=1, device="cuda")
    assert on_cpu.device == "cpu" and " on cpu:" in on_cpu.describe()
    nothing = tensorlint.verify(lambda: None, calls=4, warmup=1, device="cuda")
    assert nothing.device == "" and nothing.describe().startswith("NOT REPRODUCED: ")
