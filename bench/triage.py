"""Re-run tensorlint over the corpus and join its findings with the committed triage.

    python bench/triage.py [--dest DIR] [--findings FILE] [--check]

Each finding is matched to a row of bench/triage.csv by package, file, code and the text of
the reported line (not its number, so that the triage survives lines moving). The table and
the counts in docs/real-world.md, between the `triage` markers, are rewritten from the join.
A finding without a row is printed as untriaged and the command exits 1; so does a row that no
finding matches any more (stale). `--check` writes nothing and only reports.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DEST, PINNED, ROOT, fetch

from tensorlint.rules import OPT_IN_CODES

TRIAGE = Path(__file__).resolve().parent / "triage.csv"
DOC = ROOT / "docs" / "real-world.md"
START, END = "<!-- triage:start -->", "<!-- triage:end -->"


@dataclass(frozen=True)
class Key:
    package: str
    file: str
    code: str
    line_text: str


@dataclass(frozen=True)
class Row:
    package: str
    version: str
    file: str
    line: int
    code: str
    verdict: str  # TP or FP
    reason: str


def findings(corpus: Path, given: Path | None) -> list[dict[str, object]]:
    if given is not None:
        records: list[dict[str, object]] = json.loads(given.read_text())
        return records
    command = [sys.executable, "-m", "tensorlint", "--exit-zero", "--no-cache", "--output-format", "json"]
    command += ["--extend-select", ",".join(sorted(OPT_IN_CODES - {"TL900"})), "."]  # the opt-in leak rules too
    result = subprocess.run(command, cwd=corpus, capture_output=True, text=True, check=True)
    records = json.loads(result.stdout)
    return records


def load_triage() -> dict[Key, tuple[str, str]]:
    with TRIAGE.open(newline="", encoding="utf-8") as stream:
        return {
            Key(r["package"], r["file"], r["code"], r["line_text"]): (r["verdict"], r["reason"])
            for r in csv.DictReader(stream)
        }


def join(corpus: Path, records: list[dict[str, object]]) -> tuple[list[Row], list[Key], list[Key]]:
    """Triaged rows, untriaged findings, and stale triage keys."""
    versions = {source.folder: source for source in PINNED}
    triage = load_triage()
    rows, untriaged, used = [], [], set()
    for record in records:
        path = Path(str(record["filename"])).resolve().relative_to(corpus.resolve())
        folder, file = path.parts[0], Path(*path.parts[1:]).as_posix()
        line = int(record["location"]["row"])  # type: ignore[index]
        text = (corpus / path).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1].strip()
        source = versions[folder]
        key = Key(source.name, file, str(record["code"]), text)
        if key not in triage:
            untriaged.append(key)
            continue
        used.add(key)
        verdict, reason = triage[key]
        rows.append(Row(source.name, source.version, file, line, key.code, verdict, reason))
    stale = [key for key in triage if key not in used]
    return rows, untriaged, stale


def render(rows: list[Row]) -> str:
    verdicts = Counter(row.verdict for row in rows)
    total = len(rows)
    lines = [
        START,
        "",
        f"{total} findings: {verdicts['TP']} true positives, {verdicts['FP']} false positive{'s' if verdicts['FP'] != 1 else ''}",
    ]
    if total:
        lines[-1] += f" (precision {100 * verdicts['TP'] / total:.0f}%)."
    lines += ["", "| code | findings | TP | FP |", "|---|---:|---:|---:|"]
    for code in sorted({row.code for row in rows}):
        of_code = [row for row in rows if row.code == code]
        tp = sum(1 for row in of_code if row.verdict == "TP")
        lines.append(f"| {code} | {len(of_code)} | {tp} | {len(of_code) - tp} |")
    lines += ["", "| package | version | file | line | code | verdict | reason |", "|---|---|---|---:|---|---|---|"]
    for row in sorted(rows, key=lambda r: (r.package, r.file, r.line)):
        lines.append(
            f"| {row.package} | {row.version} | `{row.file}` | {row.line} | {row.code} | {row.verdict} | {row.reason} |"
        )
    return "\n".join([*lines, "", END])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--findings", type=Path, help="tensorlint JSON output to use instead of running it")
    parser.add_argument("--check", action="store_true", help="report only; do not rewrite docs/real-world.md")
    options = parser.parse_args()
    corpus = fetch(options.dest)
    rows, untriaged, stale = join(corpus, findings(corpus, options.findings))
    for key in untriaged:
        print(f"untriaged: {key.package},{key.file},{key.code},{key.line_text!r}", file=sys.stderr)
    for key in stale:
        print(f"stale triage row (no finding any more): {key.package},{key.file},{key.code}", file=sys.stderr)
    table = render(rows)
    if not options.check:
        doc = DOC.read_text(encoding="utf-8")
        before, _, rest = doc.partition(START)
        _, _, after = rest.partition(END)
        DOC.write_text(before + table + after, encoding="utf-8")
    print(table.splitlines()[2])
    return 1 if untriaged or stale else 0


if __name__ == "__main__":
    sys.exit(main())
