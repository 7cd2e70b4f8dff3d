"""List the corpus sites that look like each rule's pattern, to look for what tensorlint misses.

    python bench/candidates.py [--dest DIR] [findings.json]

A syntactic search with `ast`, deliberately wider than the rules: every `+=` in a loop whose
value names a loss, every `.append`/`+=`/`[k] =` on `self.` attributes inside `forward`, every
`.cuda()`/`.to("cuda")` inside `__getitem__` or a collate/worker-init function, and every
lambda or nested function passed to a `register_*hook`. Each site is printed with whether
tensorlint reported its line (from the JSON findings given, else by running it), for reading.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DEST

WORKER_FUNCTIONS = ("__getitem__", "__iter__", "collate", "worker_init")


def _mentions_loss(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and "loss" in n.id.lower() for n in ast.walk(node))


def _is_cuda_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    if node.func.attr == "cuda":
        return True
    return node.func.attr == "to" and any(
        isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("cuda") for a in node.args
    )


def _self_target(node: ast.AST) -> bool:
    base = node
    while isinstance(base, (ast.Attribute, ast.Subscript)):
        base = base.value
    return isinstance(base, ast.Name) and base.id == "self" and base is not node


def sites(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """(line, pattern, function) for every candidate in a module."""
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        name = function.name
        for loop in ast.walk(function):
            if isinstance(loop, (ast.For, ast.While)):
                for node in ast.walk(loop):
                    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and _mentions_loss(node.value):
                        yield node.lineno, "loss += in a loop", name
        for node in ast.walk(function):
            call = node if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            attr = call.func.attr if call is not None and isinstance(call.func, ast.Attribute) else ""
            if name == "forward" and call is not None and attr == "append" and _self_target(call.func):
                yield node.lineno, "self.<container>.append in forward", name
            if any(word in name for word in WORKER_FUNCTIONS) and _is_cuda_call(node):
                yield node.lineno, "CUDA in worker code", name
            hook = attr.startswith("register") and attr.endswith("hook")
            if call is not None and hook and call.args and isinstance(call.args[0], ast.Lambda):
                yield node.lineno, "lambda registered as hook", name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    parser.add_argument("findings", nargs="?", type=Path, help="tensorlint --output-format json output")
    options = parser.parse_args()
    corpus = options.dest / "corpus"
    if options.findings:
        findings = json.loads(options.findings.read_text())
    else:
        command = [sys.executable, "-m", "tensorlint", "--exit-zero", "--output-format", "json", "."]
        findings = json.loads(subprocess.run(command, cwd=corpus, capture_output=True, text=True, check=True).stdout)
    reported = {(str(Path(f["filename"]).resolve()), f["location"]["row"]) for f in findings}
    for path in sorted(corpus.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for line, pattern, function in sorted(set(sites(tree))):
            found = "reported" if (str(path.resolve()), line) in reported else "silent"
            print(f"{path.relative_to(corpus)}:{line}\t{pattern}\t{function}\t{found}")


if __name__ == "__main__":
    main()
