"""The subprocess entry: `python -m tensorlint.verify.child` reads a request (JSON: the jobs of one
file and an events path) on stdin, and appends one JSON line per event to the events file:
`{"start": i}` before job i, `{"done": i, "verdict": ...}` after it, with the warnings the verified
code raised. stdout and stderr are left to the user's code; the parent does not print them."""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any, TextIO


class _Warnings:
    """Collects the warnings of the verified code (torch's included) instead of printing them:
    they are the user's, and the report shows them in a section of their own."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def show(self, message: Any, category: Any, filename: str, lineno: int, *_: Any, **__: Any) -> None:
        text = f"{filename}:{lineno}: {category.__name__}: {str(message).strip().splitlines()[0] if str(message).strip() else ''}"
        if text not in self.seen:
            self.seen.append(text)

    def take(self) -> list[str]:
        taken, self.seen = self.seen, []
        return taken


def main() -> int:
    request = json.load(sys.stdin)
    collected = _Warnings()
    warnings.simplefilter("default")  # each distinct warning once
    warnings.showwarning = collected.show
    with open(request["events"], "a", encoding="utf-8") as events:
        import torch  # once for all the jobs of the file (a missing torch ends the child: the parent says so)

        _emit(events, {"torch": torch.__version__, "warnings": collected.take()})
        from tensorlint.verify.drive import run
        from tensorlint.verify.failure import summarise
        from tensorlint.verify.ledger import SKIP_DIRS
        from tensorlint.verify.verdict import INCONCLUSIVE, Verdict

        for index, job in enumerate(request["jobs"]):
            _emit(events, {"start": index})
            try:
                verdict = run(job)
            except Exception as error:
                verdict = Verdict(INCONCLUSIVE, reason=f"the target raised {summarise(error, SKIP_DIRS)}", device="")
            _emit(events, {"done": index, "verdict": verdict.to_json(), "warnings": collected.take()})
    return 0


def _emit(events: TextIO, event: dict[str, Any]) -> None:
    events.write(json.dumps(event) + "\n")
    events.flush()


if __name__ == "__main__":
    raise SystemExit(main())
