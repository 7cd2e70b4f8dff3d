"""`tensorlint verify --run train.py`: a user's whole training script, watched step by step.

The script runs as `python train.py ARGS` would run it (`__main__`, its own `sys.argv`, its output
untouched). A sample is taken after every `optimizer.step()` (a global post-step hook), or, in a
script that steps no optimizer, at every DataLoader batch. After `steps` samples the script is
stopped, and the verdict is taken while its frames are still alive, so that its locals can be
named as holders.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader

from tensorlint.verify.failure import summarise
from tensorlint.verify.ledger import SKIP_DIRS
from tensorlint.verify.sampler import Probe
from tensorlint.verify.verdict import INCONCLUSIVE, Verdict, plural

OPTIMIZER, BATCH = "optimizer step", "DataLoader batch"


class _Stop(BaseException):
    """Ends the script after the last sample (not an Exception: `except Exception` keeps out)."""


class _Watcher:
    def __init__(self, script: Path, steps: int, warmup: int, device: str) -> None:
        self.script, self.steps, self.warmup = str(script), steps, warmup
        self.probe = Probe(device, mode=OPTIMIZER)
        self.trigger: str | None = None
        self.samples = 0
        self.verdict: Verdict | None = None

    def tick(self, trigger: str) -> None:
        if self.trigger is None:
            self.trigger = self.probe.mode = trigger
            self.probe.module = sys.modules.get("__main__")  # the script's globals, while it runs
        if trigger != self.trigger or self.verdict is not None:
            return
        self.samples += 1
        if self.samples == self.warmup:
            self.probe.start(self.warmup)
        elif self.samples > self.warmup:
            self.probe.sample()
        if self.samples >= self.steps:
            self.verdict = self.finish()
            raise _Stop

    def finish(self) -> Verdict:
        if self.samples < self.warmup + 3:
            return Verdict(
                INCONCLUSIVE,
                reason=f"{self.samples} samples ({self.trigger or 'no optimizer step, no DataLoader batch'}); "
                f"it needs {self.warmup + 3} ({self.warmup} of warm-up)",
                device="",
                torch=torch.__version__,
            )
        return self.probe.finish(_script_frame(self.script))

    def batches(self, original: Any) -> Any:
        watcher = self

        def iterate(loader: DataLoader[Any]) -> Iterator[Any]:
            for index, batch in enumerate(original(loader)):
                if index > 0 and watcher.trigger != OPTIMIZER:
                    watcher.tick(BATCH)  # the previous batch's work is done
                yield batch

        return iterate


def run_script(job: dict[str, Any]) -> Verdict:
    script = Path(job["file"]).resolve()
    watcher = _Watcher(script, int(job.get("steps", 50)), int(job.get("warmup", 3)), job.get("device", "auto"))
    hook = register_optimizer_step_post_hook(lambda *_: watcher.tick(OPTIMIZER))
    original_iter = DataLoader.__iter__
    DataLoader.__iter__ = watcher.batches(original_iter)  # type: ignore[method-assign]
    argv, path = sys.argv, list(sys.path)
    sys.argv = [str(script), *job.get("args", [])]
    sys.path.insert(0, str(script.parent))
    ending = ""
    try:
        with watcher.probe:
            watcher.probe.ledger.recording = False
            try:
                runpy.run_path(str(script), run_name="__main__")
                ending = "the script ended (exit status 0)"
            except _Stop:
                ending = f"the script was stopped after {watcher.samples} {plural(watcher.trigger or OPTIMIZER)}"
            except SystemExit as leaving:
                code = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
                ending = f"the script exited with status {code}"
            except Exception as error:
                ending = f"the script raised {summarise(error, SKIP_DIRS)}"
            verdict = watcher.verdict or watcher.finish()
    finally:
        hook.remove()
        DataLoader.__iter__ = original_iter  # type: ignore[method-assign]
        sys.argv, sys.path[:] = argv, path
    return _with(verdict, ending, watcher)


def _with(verdict: Verdict, ending: str, watcher: _Watcher) -> Verdict:
    from dataclasses import replace

    probe = watcher.probe
    series = {"bytes": probe.live, "tensors": probe.tensors, "nodes": probe.nodes}
    return replace(verdict, ending=ending, series=series, mode=watcher.trigger or OPTIMIZER)


def _script_frame(script: str) -> FrameType | None:
    """The innermost frame of the script on the stack: its locals are the training loop's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != script:
        frame = frame.f_back
    return frame
