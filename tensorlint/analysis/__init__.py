"""The facts every rule reads, computed once per module.

`analyze(module)` runs two passes over a parsed module: `index` collects imports, classes,
functions and how they are used (forward code, hooks, DataLoader worker code); `flow` then
walks each function in statement order and records the events that rules judge: values
stored into containers, accumulations in loops, closures that escape, CUDA work (kept in
`facts.Facts`).
"""

from tensorlint.analysis.facts import Facts
from tensorlint.analysis.flow import analyze

__all__ = ["Facts", "analyze"]
