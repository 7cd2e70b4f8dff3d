"""The subprocess entry: `python -m tensorlint.verify.child` reads a job (JSON) on stdin and
writes a verdict (JSON) to the job's `result` path; stdout is left to the user's code."""

from __future__ import annotations

import json
import sys
import traceback
import warnings


def main() -> int:
    job = json.load(sys.stdin)
    warnings.simplefilter("ignore")  # user code's warnings are not the verifier's output
    from tensorlint.verify.drive import run
    from tensorlint.verify.verdict import INCONCLUSIVE, Verdict

    try:
        verdict = run(job)
    except Exception as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        reason = f"the target raised {type(error).__name__}: {error} ({where.filename}:{where.lineno})"
        verdict = Verdict(INCONCLUSIVE, reason=reason, device="")
    with open(job["result"], "w", encoding="utf-8") as handle:
        json.dump(verdict.to_json(), handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
