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
    result.stdout.fnmatch_lines(["*TensorLeakError: tensor leak: CONFIRMED on cpu: +16.0 KiB per call over 8 calls*"])
