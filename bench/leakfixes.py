"""Real memory-leak fixes mined from public git history: recall on the leaky file, silence on the fixed one.

    python bench/leakfixes.py materialise [--dest DIR]   # the file before and after each fix, outside the repo
    python bench/leakfixes.py run [--split dev|test|all] [--dest DIR] [--json FILE]

`bench/leakfixes.jsonl` holds references only, one maintainer-merged fix per line: repository,
fixing commit and its parent, path, the leaking lines before the fix and the fixed lines after it,
the rule that names the pattern (or "other"), why it leaked, and the commit's URL. No fetched code
is committed. `split` assigns each repository, by a hash of its name fixed before tensorlint ever
ran on it, to the dev half (worked from) or the test half (only measured).

Files come from a local mirror (`/work/.mirror/<owner>+<name>/repo`, or `$TENSORLINT_MIRROR`)
when there is one, else from a partial clone of the GitHub repository into DEST/repos. Each
file is linted inside its project's other modules at the same commit (the whole tree when it is
small, else the file's package), so that its imports resolve as in the user's checkout.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCES = ROOT / "bench" / "leakfixes.jsonl"
DEFAULT_DEST = Path(os.environ.get("TENSORLINT_BENCH_DIR", Path.home() / ".cache" / "tensorlint-bench")) / "leakfixes"
MIRROR = Path(os.environ.get("TENSORLINT_MIRROR", "/work/.mirror"))
FIRST_RULES = tuple(f"TL00{n}" for n in range(1, 10))  # the rules before issue 18, for comparison over time


@dataclass(frozen=True)
class Fix:
    repo: str
    fix_commit: str
    before_commit: str
    path_before: str
    path_after: str
    lines_before: tuple[int, ...]
    lines_after: tuple[int, ...]
    rule: str
    why: str
    url: str

    @property
    def key(self) -> str:
        digest = hashlib.sha256(f"{self.repo}@{self.fix_commit}:{self.path_before}".encode()).hexdigest()
        return f"{self.repo.replace('/', '+')}-{digest[:10]}"

    def before_file(self, dest: Path) -> Path:
        return dest / self.key / "before" / self.repo.split("/")[1] / self.path_before

    def after_file(self, dest: Path) -> Path:
        return dest / self.key / "after" / self.repo.split("/")[1] / self.path_after

    @property
    def split(self) -> str:
        return split_of(self.repo)


def split_of(repo: str) -> str:
    """dev or test, by repository: every fix of a repository falls in the same half."""
    return "dev" if hashlib.sha256(repo.lower().encode()).digest()[0] % 2 == 0 else "test"


def load() -> list[Fix]:
    fixes = []
    for line in REFERENCES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        fixes.append(
            Fix(
                record["repo"],
                record["fix_commit"],
                record["before_commit"],
                record["path_before"],
                record["path_after"],
                tuple(record["lines_before"]),
                tuple(record["lines_after"]),
                record["rule"],
                record["why"],
                record["url"],
            )
        )
    return fixes


def _git_dir(repo: str, dest: Path) -> Path:
    mirror = MIRROR / repo.replace("/", "+") / "repo"
    for git_dir in (mirror, mirror / ".git"):  # bare, or a checkout's
        if (git_dir / "HEAD").is_file():
            return git_dir
    clone = dest / "repos" / repo.replace("/", "+")
    if not clone.is_dir():
        url = f"https://github.com/{repo}.git"
        subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, str(clone)], check=True)
    return clone


MAX_CONTEXT_FILES = 1500  # the project's other modules, so that imports resolve as in a checkout


def materialise(fixes: list[Fix], dest: Path) -> None:
    for fix in fixes:
        folder = dest / fix.key
        checkouts = [folder / side / fix.repo.split("/")[1] for side in ("before", "after")]
        if not (fix.before_file(dest).is_file() and fix.after_file(dest).is_file()):
            git_dir = _git_dir(fix.repo, dest)
            for checkout, commit, path in (
                (checkouts[0], fix.before_commit, fix.path_before),
                (checkouts[1], fix.fix_commit, fix.path_after),
            ):
                # Under the repository's name: a project that is its own package (`import TTS.utils`) resolves.
                _write_tree(git_dir, _context(git_dir, commit, path), checkout)
        for checkout in checkouts:
            # A clone's root has `.git`: the project's root for tensorlint, as in a user's checkout.
            (checkout / ".git").mkdir(exist_ok=True)
    print(f"{len(fixes)} fixes in {dest}")


def _context(git_dir: Path, commit: str, path: str) -> list[tuple[str, str]]:
    """(blob, path) of the file and the project's Python modules around it: the whole tree when it
    is small, else the file's own package (its top folder), else the folders on the file's path."""
    listed = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", commit], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    modules = [
        (line.split()[2], line.split("\t", 1)[1]) for line in listed if line.endswith(".py") and " blob " in line
    ]
    top = path.split("/", 1)[0] + "/"
    folders = {str(parent) for parent in Path(path).parents}
    for chosen in (
        modules,
        [m for m in modules if m[1].startswith(top)],
        [m for m in modules if str(Path(m[1]).parent) in folders],
    ):
        if len(chosen) <= MAX_CONTEXT_FILES:
            return chosen if any(p == path for _, p in chosen) else [*chosen, *(m for m in modules if m[1] == path)]
    return [m for m in modules if m[1] == path]


def _write_tree(git_dir: Path, blobs: list[tuple[str, str]], into: Path) -> None:
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{blob}\n" for blob, _ in blobs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    at = 0
    for _, path in blobs:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        if header[-1] == b"missing":  # a blob the snapshot left out (a file of 4 MiB or more)
            at = header_end + 1
            continue
        size = int(header[2])
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[header_end + 1 : header_end + 1 + size])
        at = header_end + 1 + size + 1


def _findings(path: Path) -> list[tuple[int, str]]:
    from tensorlint.engine import lint_file

    return sorted({(f.location.row, f.code) for f in lint_file(path) if f.code})


def _statement_lines(path: Path, lines: tuple[int, ...]) -> set[int]:
    """The labelled lines, with every line of a simple statement that starts on one: a finding on
    `"scalar_loss": scalar_loss,` is in the `return {` labelled by its first line. (A compound
    statement's body is not its header's: a `for` line stays one line.)"""
    spread = set(lines)
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return spread
    for node in ast.walk(tree):
        simple = isinstance(node, ast.stmt) and not hasattr(node, "body")
        if simple and node.lineno in lines and node.end_lineno is not None:
            spread.update(range(node.lineno, node.end_lineno + 1))
    return spread


def run(fixes: list[Fix], dest: Path, report: Path | None) -> None:
    rows = []
    for fix in fixes:
        before, after = fix.before_file(dest), fix.after_file(dest)
        if not before.is_file() or not after.is_file():
            sys.exit(f"missing {fix.key}: run `python bench/leakfixes.py materialise` first")
        found_before, found_after = _findings(before), _findings(after)
        leak_lines, fixed_lines = _statement_lines(before, fix.lines_before), _statement_lines(after, fix.lines_after)
        rows.append(
            {
                "key": fix.key,
                "repo": fix.repo,
                "split": fix.split,
                "rule": fix.rule,
                "url": fix.url,
                "found": any(row in leak_lines and code == fix.rule for row, code in found_before),
                "found_any_rule": any(row in leak_lines for row, _ in found_before),
                "after_clean": not any(row in fixed_lines and code == fix.rule for row, code in found_after),
                "other_before": [f for f in found_before if f[0] not in leak_lines],
                "other_after": [f for f in found_after if f[0] not in fixed_lines],
            }
        )
    _print_table(rows)
    if report is not None:
        report.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def _print_table(rows: list[dict[str, object]]) -> None:
    from tensorlint.rules import default_codes

    rules = default_codes()
    # "any rule": a finding of another rule in the leaking statement (the leak shown, under
    # another name); the headline counts the labelled rule only.
    print("| split | rule | fixes | found in before | any rule | after clean |")
    print("|---|---|---:|---:|---:|---:|")
    for split in ("dev", "test"):
        in_split = [r for r in rows if r["split"] == split]
        by_rule = Counter(str(r["rule"]) for r in in_split)
        for rule in [*rules, "other"]:
            of_rule = [r for r in in_split if r["rule"] == rule]
            if of_rule:
                found = sum(1 for r in of_rule if r["found"])
                anywhere = sum(1 for r in of_rule if r["found_any_rule"])
                clean = sum(1 for r in of_rule if r["after_clean"])
                print(f"| {split} | {rule} | {by_rule[rule]} | {found} | {anywhere} | {clean} |")
        for label, codes in (("TL001-TL009", FIRST_RULES), (f"{rules[0]}-{rules[-1]}", rules)):
            named = [r for r in in_split if r["rule"] in codes]
            if named:
                found = sum(1 for r in named if r["found"])
                anywhere = sum(1 for r in named if r["found_any_rule"])
                clean = sum(1 for r in named if r["after_clean"])
                print(
                    f"| {split} | {label} | {len(named)} | {found} ({found / len(named):.2f}) | "
                    f"{anywhere} ({anywhere / len(named):.2f}) | {clean} ({clean / len(named):.2f}) |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["materialise", "run"])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--json", type=Path, default=None, help="write every row, with the other findings, here")
    args = parser.parse_args()
    fixes = [f for f in load() if args.split == "all" or f.split == args.split]
    if args.command == "materialise":
        materialise(fixes, args.dest)
    else:
        run(fixes, args.dest, args.json)


if __name__ == "__main__":
    main()
