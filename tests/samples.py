"""Source texts the tests lint, one of each shape, with the rows of their findings.

- LEAKY: an evaluation loop that sums loss tensors (TL004 at LEAKY_ROW, column LEAKY_COLUMN);
  the leak most tests need, as a file, a notebook cell, stdin or an editor buffer.
- FIXED: LEAKY after TL004's fix (the loop wrapped in `torch.no_grad()`, as it has no
  `backward()`): the clean twin, and what `--fix --unsafe-fixes` must write.
- CACHE: a module whose forward keeps its activations (TL001 at CACHE_ROW).
- BOTH: the two leaks in one file (`# noqa` and `--add-noqa` need a line of each code).

The texts are built from three parts so that none is written twice; rows are computed from them.
"""

from __future__ import annotations

from pathlib import Path

_HEADER = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
"""

_EVALUATE = """\
def evaluate(loader):
    total = 0.0
    for x, y in loader:
        total += nn.functional.cross_entropy(model(x), y)
    return total
"""

_RECORDER = """\
class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.cache = []

    def forward(self, x):
        h = self.fc(x)
        self.cache.append(h)
        return h
"""


def row_of(source: str, line: str) -> int:
    """The 1-based row of a whole line of a source text."""
    return source.splitlines().index(line) + 1


LEAKY = f"{_HEADER}\n\n{_EVALUATE}"
LEAKY_LINE = "        total += nn.functional.cross_entropy(model(x), y)"
LEAKY_ROW = row_of(LEAKY, LEAKY_LINE)
LEAKY_COLUMN = LEAKY_LINE.index("total") + 1  # the `total +=` statement, 1-based
# LEAKY_LINE's statement over three lines: a finding on its first, a `# noqa` after its last.
LEAKY_LINE_SPLIT = "        total += nn.functional.cross_entropy(\n            model(x), y\n        )"

_LOOP = f"    for x, y in loader:\n{LEAKY_LINE}\n"
FIXED = LEAKY.replace(_LOOP, "    with torch.no_grad():\n" + "".join(f"    {line}\n" for line in _LOOP.splitlines()))

CACHE = f"{_HEADER}\n\n{_RECORDER}"
CACHE_LINE = "        self.cache.append(h)"
CACHE_ROW = row_of(CACHE, CACHE_LINE)

BOTH = f"{_HEADER}\n\n{_RECORDER}\n\n{_EVALUATE}"


def write_leaky_files(folder: Path, count: int) -> list[Path]:
    """`count` copies of LEAKY, train_0.py and up: a run over many files that each have a finding."""
    paths = [folder / f"train_{index}.py" for index in range(count)]
    for path in paths:
        path.write_text(LEAKY, encoding="utf-8")
    return paths
