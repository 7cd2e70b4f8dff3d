"""Every file of the trees the mined fixes come from: findings on code nobody chose, triaged.

    python bench/trees.py run --split dev [--out FILE]           # lint every 'before' tree of the half
    python bench/trees.py check --split dev [--findings FILE]    # precision against the labels

`bench/leakfixes.py materialise` first. Each fix's 'before' tree (the file and the project's
modules around it) is checked as a user would check it; a repository's trees share most files, so
findings are counted once per (repository, path, rule, source line). `bench/trees_triage.csv`
labels each by the stripped text of its line, which survives changes to the analysis and to the
message: `TP` (the pattern is there and keeps memory), `FP`, and whether a TP is worth a change.
`check` exits 1 when a finding has no label.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from leakfixes import DEFAULT_DEST, load

LABELS = Path(__file__).resolve().parent / "trees_triage.csv"
COLUMNS = ["split", "repo", "path", "code", "source", "label", "worth", "why"]


def findings(split: str, dest: Path) -> list[dict[str, str | int]]:
    """The deduplicated findings of every 'before' tree of the half."""
    seen: dict[tuple[str, str, str, str], dict[str, str | int]] = {}
    for fix in load():
        root = dest / fix.key / "before" / fix.repo.split("/")[1]
        if fix.split != split or not root.is_dir():
            continue
        command = [sys.executable, "-m", "tensorlint", "check", "--isolated", "--no-cache", "--exit-zero"]
        # From the tree's root, as a user runs it: the paths are the project's own (`tests/...`).
        out = subprocess.run([*command, "--output-format", "json-lines", "."], capture_output=True, text=True, cwd=root)
        for line in out.stdout.splitlines():
            found = json.loads(line)
            if found["code"] is None:
                continue  # a file that does not parse (Python 2 examples): not a finding
            path = (root / found["filename"]).resolve()
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            row = found["location"]["row"]
            source = lines[row - 1].strip() if 0 < row <= len(lines) else ""
            key = (fix.repo, str(path.relative_to(root.resolve())), found["code"], source)
            seen.setdefault(key, {"split": split, "repo": key[0], "path": key[1], "code": key[2], "source": source,
                                  "line": row, "message": found["message"]})  # fmt: skip
    return sorted(seen.values(), key=lambda f: (str(f["repo"]), str(f["path"]), int(f["line"])))


def labels() -> dict[tuple[str, str, str, str], dict[str, str]]:
    if not LABELS.exists():
        return {}
    with LABELS.open(encoding="utf-8", newline="") as handle:
        return {(r["repo"], r["path"], r["code"], r["source"]): r for r in csv.DictReader(handle)}


def check(found: list[dict[str, str | int]]) -> int:
    known = labels()
    counts: Counter[tuple[str, str]] = Counter()
    untriaged = []
    for finding in found:
        label = known.get((str(finding["repo"]), str(finding["path"]), str(finding["code"]), str(finding["source"])))
        if label is None:
            untriaged.append(finding)
            continue
        counts[(str(finding["code"]), label["label"])] += 1
        counts[("all", label["label"])] += 1
        if label["label"] == "TP" and label["worth"] == "yes":
            counts[("all", "worth")] += 1
    print("| rule | findings | true | false | precision |")
    print("|---|---:|---:|---:|---:|")
    for code in [*sorted({c for c, _ in counts} - {"all"}), "all"]:
        true, false = counts[(code, "TP")], counts[(code, "FP")]
        precision = f"{true / (true + false):.2f}" if true + false else "-"
        print(f"| {code} | {true + false} | {true} | {false} | {precision} |")
    print(f"worth a change: {counts[('all', 'worth')]} of {counts[('all', 'TP')]} true findings")
    for finding in untriaged:
        print(
            f"untriaged: {finding['repo']} {finding['path']}:{finding['line']} {finding['code']} {finding['source']!r}"
        )
    return 1 if untriaged else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["run", "check"])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--out", type=Path, help="run: write the findings here as JSON lines")
    parser.add_argument("--findings", type=Path, help="check: findings written by `run --out` instead of running")
    args = parser.parse_args()
    if args.command == "check" and args.findings is not None:
        found = [json.loads(line) for line in args.findings.read_text(encoding="utf-8").splitlines()]
    else:
        found = findings(args.split, args.dest)
    if args.command == "run":
        text = "".join(json.dumps(f) + "\n" for f in found)
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    return check(found)


if __name__ == "__main__":
    sys.exit(main())
