"""The subprocess entry: `python -m tensorlint.verify.child` reads a job (JSON) on stdin and
writes a verdict (JSON) to the job's `result` path; stdout is left to the user's code."""

from __future__ import annotations

import json
import sys
import warnings


def main() -> int:
    job = json.load(sys.stdin)
    warnings.simplefilter("ignore")  # user code's warnings are not the verifier's output
    from tensorlint.verify.drive import run
    from tensorlint.verify.verdict import INCONCLUSIVE, Verdict

    try:
        verdict = run(job)
    except Exception as error:
        from tensorlint.verify.failure import summarise
        from tensorlint.verify.ledger import SKIP_DIRS

        verdict = Verdict(INCONCLUSIVE, reason=f"the target raised {summarise(error, SKIP_DIRS)}", device="")
    with open(job["result"], "w", encoding="utf-8") as handle:
        json.dump(verdict.to_json(), handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
