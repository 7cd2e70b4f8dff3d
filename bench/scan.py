"""Scan real PyTorch training repositories with tensorlint and measure its precision.

    python bench/scan.py materialise [--dest DIR]
    python bench/scan.py run [--dest DIR] [--out FILE]

`bench/repos.csv` pins each repository (repo,commit,url,domain). `materialise` writes the
`.py` and `.ipynb` files of each pinned commit, with its `pyproject.toml` and `setup.cfg` files
(at any depth) and an empty `.git` folder at the top, which mark project roots as in a checkout, into
DIR/<owner>+<name>/ (default `$TENSORLINT_BENCH_DIR/repos`, else
`~/.cache/tensorlint-bench/repos`), from the local mirror
`/work/.mirror/<owner>+<name>` when there is one, else from a blob-less clone of the url; a
repository already there at its commit is skipped, and one that can be neither read from a mirror
nor cloned is named and left out (the command then exits 1). Nothing fetched is committed.

`run` checks each repository it has (naming those not materialised)
with `tensorlint check --isolated` (the default rules and the
opt-in leak rules, TL900 aside), writes one row
per finding (repo,commit,path,line,code,message; `line` is `cell:row` in a notebook) to
`bench/scan_findings.csv`, joins them with the hand triage in `bench/scan_triage.csv`
(repo,path,line,code,verdict,worth_change,reason) and prints, per code: findings, TP, FP,
untriaged and precision, the share of TPs worth a change, and every untriaged finding.

`bench/scan_first_sight.csv` keeps, judged the same way, what the repositories added on
2026-12-05 gave when first scanned, before anything was changed for them: batch A (rows 61-112 of
`repos.csv`) with tensorlint at ea3923e, batch B (rows 113-162) at 81592e9, after A's changes,
batch C (rows 163-210) at e7b4802, after B's, batch D (rows 211-243) at 4b97d97, after C's,
batch E (rows 244-262) at 2bc9ea0, after D's, batch F (rows 263-279) at 68ddb16, after E's, and
batch G (rows 280-296) at 363818c, after F's. `load_repos` refuses a repository kept for
independent evaluation (`../shared/eval-reserved-repos.txt`), and names those of the mined
fixes' test half, matched by name whatever the owner: a moved repository is the same code. A later version is measured against
`scan_triage.csv`; this file shows what unseen code gave.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tensorlint.rules import OPT_IN_CODES

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
REPOS = BENCH / "repos.csv"
TRIAGE = BENCH / "scan_triage.csv"
MIRRORS = Path("/work/.mirror")
# Kept for independent evaluation, where this checkout has them beside it: never scanned here.
RESERVED = ROOT.parent / "shared" / "eval-reserved-repos.txt"
MINED = BENCH / "leakfixes.jsonl"
DEFAULT_DEST = Path(os.environ.get("TENSORLINT_BENCH_DIR", Path.home() / ".cache" / "tensorlint-bench")) / "repos"
MARKER = ".bench-commit"
SUFFIXES = (".py", ".ipynb")
# Besides the code, the files that mark a project's root, as in the checkout (`tensorlint.source.ROOT_MARKERS`).
ROOT_MARKER_FILES = ("pyproject.toml", "setup.cfg")


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    commit: str
    url: str
    domain: str

    @property
    def folder(self) -> str:
        return self.name.replace("/", "+")


def load_repos() -> list[Repo]:
    with REPOS.open(newline="", encoding="utf-8") as stream:
        repos = [Repo(r["repo"], r["commit"], r["url"], r["domain"]) for r in csv.DictReader(stream)]
    reserved = _named_like(repos, _reserved_names())
    if reserved:
        raise SystemExit(f"reserved for independent evaluation (never scanned here): {', '.join(reserved)}")
    mined = _named_like(repos, _mined_test_names())
    if mined:
        print(f"note: the mined fixes' test half has repositories so named: {', '.join(mined)}", file=sys.stderr)
    return repos


def _named_like(repos: list[Repo], names: set[str]) -> list[str]:
    """The pinned repositories whose name, without its owner, is one of `names`: a repository that
    moved to another owner (`pytorch/botorch`, now `meta-pytorch/botorch`) is the same code."""
    return [repo.name for repo in repos if repo.name.split("/")[-1].lower() in names]


def _reserved_names() -> set[str]:
    if not RESERVED.is_file():
        return set()
    lines = RESERVED.read_text(encoding="utf-8").splitlines()
    return {line.strip().split("/")[-1].lower() for line in lines if line.strip() and not line.startswith("#")}


def _mined_test_names() -> set[str]:
    with MINED.open(encoding="utf-8") as stream:
        rows = [json.loads(line) for line in stream if line.strip()]
    return {row["repo"].split("/")[-1].lower() for row in rows if row.get("split") == "test"}


def mirror_git_dir(repo: Repo) -> Path | None:
    """The local mirror's git directory (names compared case-insensitively), if any holds the commit."""
    if not MIRRORS.is_dir():
        return None
    for entry in MIRRORS.iterdir():
        if entry.name.lower() != repo.folder.lower():
            continue
        for candidate in (entry / "repo" / ".git", entry / "repo", entry / ".git", entry):
            probe = ["git", "--git-dir", str(candidate), "cat-file", "-e", f"{repo.commit}^{{commit}}"]
            if (candidate / "objects").is_dir() and subprocess.run(probe, capture_output=True).returncode == 0:
                return candidate
    return None


def extract(git_dir: Path, commit: str, target: Path) -> int:
    """Write the commit's regular .py/.ipynb files (and its root markers) under target (`ls-tree` + `cat-file --batch`, so
    that blobs absent from a partial mirror only cost those files); returns how many were written."""
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    wanted: list[tuple[str, PurePosixPath]] = []
    for entry in filter(None, listing.split(b"\0")):
        meta, _, raw = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = PurePosixPath(raw.decode("utf-8", "replace"))
        kept_file = path.suffix in SUFFIXES or path.name in ROOT_MARKER_FILES
        if kind == "blob" and mode in ("100644", "100755") and kept_file and ".." not in path.parts:
            wanted.append((sha, path))
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    kept, offset = 0, 0
    for _sha, path in wanted:
        newline = batch.index(b"\n", offset)
        header = batch[offset:newline].split()
        if header[-1] == b"missing":
            print(f"  {path}: blob missing from the mirror, skipped", file=sys.stderr)
            offset = newline + 1
            continue
        size = int(header[2])
        out = target.joinpath(*path.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(batch[newline + 1 : newline + 1 + size])
        offset = newline + 1 + size + 1
        kept += 1
    return kept


def materialise(repo: Repo, dest: Path) -> str:
    target = dest / repo.folder
    marker = target / MARKER
    if marker.is_file() and marker.read_text().strip() == repo.commit and (target / ".git").is_dir():
        return "already there"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    git_dir = mirror_git_dir(repo)
    if git_dir is not None:
        kept, source = extract(git_dir, repo.commit, target), "mirror"
    else:
        with tempfile.TemporaryDirectory() as clone:
            subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-checkout", repo.url, clone], check=True)
            kept, source = extract(Path(clone) / ".git", repo.commit, target), "clone"
    # A checkout's root holds `.git`: where tensorlint finds the project whose other modules it reads.
    (target / ".git").mkdir()
    marker.write_text(repo.commit + "\n")
    return f"{kept} files from the {source}"


def tensorlint_command() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "tensorlint"
    if venv.exists():
        return [str(venv)]
    found = shutil.which("tensorlint")
    return [found] if found else [sys.executable, "-m", "tensorlint"]


def scan(repo: Repo, dest: Path) -> list[dict[str, str]]:
    folder = dest / repo.folder
    flags = ["check", "--output-format", "json", "--no-cache", "--exit-zero", "--isolated"]
    flags += ["--extend-select", ",".join(sorted(OPT_IN_CODES - {"TL900"})), "."]
    result = subprocess.run([*tensorlint_command(), *flags], cwd=folder, capture_output=True, text=True)
    if result.returncode not in (0, 2) or not result.stdout.strip():
        raise SystemExit(f"{repo.name}: tensorlint exited {result.returncode}: {result.stderr[-2000:]}")
    rows = []
    for record in json.loads(result.stdout):
        location, cell = record["location"], record.get("cell")
        line = f"{cell}:{location['row']}" if cell is not None else str(location["row"])
        rel = Path(record["filename"]).resolve().relative_to(folder.resolve()).as_posix()
        code = record["code"] or "ERROR"  # a file tensorlint could not read or parse
        rows.append(
            {
                "repo": repo.name,
                "commit": repo.commit,
                "path": rel,
                "line": line,
                "code": code,
                "message": record["message"],
            }
        )
    return rows


def count_files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def report(findings: list[dict[str, str]]) -> None:
    triage: dict[tuple[str, str, str, str], dict[str, str]] = {}
    if TRIAGE.exists():
        with TRIAGE.open(newline="", encoding="utf-8") as stream:
            triage = {(r["repo"], r["path"], r["line"], r["code"]): r for r in csv.DictReader(stream)}
    counts: dict[str, Counter[str]] = {}
    untriaged = []
    for f in findings:
        if f["code"] == "ERROR":
            continue
        row = triage.get((f["repo"], f["path"], f["line"], f["code"]))
        verdict = row["verdict"] if row else "untriaged"
        c = counts.setdefault(f["code"], Counter())
        c["findings"] += 1
        c[verdict] += 1
        if row and verdict == "TP" and row["worth_change"] == "yes":
            c["worth"] += 1
        if not row:
            untriaged.append(f)
    total: Counter[str] = sum(counts.values(), Counter())
    print(f"\n{'code':<7}{'findings':>9}{'TP':>5}{'FP':>5}{'untriaged':>10}{'precision':>10}{'TP worth a change':>19}")
    for code, c in [*sorted(counts.items()), ("all", total)]:
        judged = c["TP"] + c["FP"]
        precision = f"{c['TP'] / judged:.0%}" if judged else "-"
        worth = f"{c['worth']}/{c['TP']}" + (f" ({c['worth'] / c['TP']:.0%})" if c["TP"] else "")
        print(f"{code:<7}{c['findings']:>9}{c['TP']:>5}{c['FP']:>5}{c['untriaged']:>10}{precision:>10}{worth:>19}")
    stale = set(triage) - {(f["repo"], f["path"], f["line"], f["code"]) for f in findings}
    if stale:
        print(f"\n{len(stale)} triage rows match no finding (stale): " + "; ".join(":".join(k) for k in sorted(stale)))
    if untriaged:
        print(f"\n{len(untriaged)} untriaged findings:")
        for f in untriaged:
            print(f"  {f['repo']}:{f['path']}:{f['line']}: {f['code']} {f['message'][:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("materialise", "run"))
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="where the repositories' files go")
    parser.add_argument("--out", type=Path, default=BENCH / "scan_findings.csv", help="the findings CSV (run)")
    args = parser.parse_args()
    repos = load_repos()
    if args.command == "materialise":
        unavailable = 0
        for repo in repos:
            try:
                outcome = materialise(repo, args.dest)
            except subprocess.CalledProcessError:  # no mirror, and the clone failed (no network)
                outcome, unavailable = "not available: no mirror, and the clone failed", unavailable + 1
            print(f"{repo.name}: {outcome}", flush=True)
        return 1 if unavailable else 0
    missing = [r.name for r in repos if not (args.dest / r.folder / MARKER).is_file()]
    if missing:
        # A partial scan is still a measurement, of fewer repositories: say which ones it lacks.
        print(f"not materialised, left out ({len(missing)}): {', '.join(missing)}", file=sys.stderr)
        repos = [r for r in repos if r.name not in missing]
    findings: list[dict[str, str]] = []
    files = 0
    start = time.perf_counter()
    for repo in repos:
        findings += scan(repo, args.dest)
        files += count_files(args.dest / repo.folder)
    elapsed = time.perf_counter() - start
    with args.out.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=["repo", "commit", "path", "line", "code", "message"])
        writer.writeheader()
        writer.writerows(findings)
    errors = sum(f["code"] == "ERROR" for f in findings)
    print(
        f"{len(repos)} repositories, {files} .py/.ipynb files, {elapsed:.1f} s; {len(findings) - errors} findings, "
        f"{errors} files not checked (syntax errors, time limit); written to {args.out}"
    )
    report(findings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
