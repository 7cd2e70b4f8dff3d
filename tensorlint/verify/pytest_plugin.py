"""pytest plugin (entry point `pytest11`): the `tensor_leak` fixture and `@pytest.mark.no_tensor_leak`.

The marker calls the test function `warmup + calls` times with the same fixture values (setup
runs once, so models and data belong in fixtures and the body is the step) and fails it when
tensor memory grows per call. torch is imported only when a marked test or the fixture runs.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "no_tensor_leak(calls=20, warmup=3, max_growth=0, device='auto'): fail if the test body keeps "
        "tensor memory across repeated calls (tensorlint)",
    )


class TensorLeakChecker:
    """The `tensor_leak` fixture: `tensor_leak.check(lambda: model(x))` raises when the step leaks."""

    def check(
        self, step: Callable[[], Any], *, calls: int = 20, warmup: int = 3, max_growth: float = 0, device: str = "auto"
    ) -> Any:
        from tensorlint.verify.api import TensorLeakError, verify

        verdict = verify(step, calls=calls, warmup=warmup, device=device)
        if verdict.leaks and verdict.bytes_per_call > max_growth:
            raise TensorLeakError(verdict, max_growth)
        if verdict.verdict == "host-only" and not max_growth:
            raise TensorLeakError(verdict)
        return verdict


@pytest.fixture
def tensor_leak() -> TensorLeakChecker:
    return TensorLeakChecker()


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, Any, None]:
    marker = pyfuncitem.get_closest_marker("no_tensor_leak")
    if marker is None:
        yield
        return
    function = pyfuncitem.obj
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    options = {"calls": 20, "warmup": 3, "max_growth": 0, "device": "auto", **marker.kwargs}
    if options["device"] == "cuda":
        import torch

        if not torch.cuda.is_available():
            pytest.skip("no_tensor_leak(device='cuda') needs CUDA")
    # Replace the call: the checker runs the body warmup + calls times instead of once.
    pyfuncitem.obj = lambda **_: TensorLeakChecker().check(lambda: function(**arguments), **options)
    try:
        yield
    finally:
        pyfuncitem.obj = function
