"""Printing findings, one module per format. `WRITERS` maps each `--output-format` to its writer."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tensorlint.findings import Finding
from tensorlint.output import github, gitlab, junit, sarif
from tensorlint.output.context import OutputContext, escape, use_colour
from tensorlint.output.json_formats import json_array, json_lines
from tensorlint.output.summary import FixAdvice, fix_listing, statistics, summary
from tensorlint.output.text import concise, full

Writer = Callable[[Sequence[Finding], OutputContext], str]

WRITERS: dict[str, Writer] = {
    "concise": concise,
    "full": full,
    "json": json_array,
    "json-lines": json_lines,
    "sarif": sarif.write,
    "github": github.write,
    "gitlab": gitlab.write,
    "junit": junit.write,
}
FORMATS = tuple(WRITERS)
# Only these are read by people: the others get no summary line, so that they stay parseable.
HUMAN_FORMATS = ("concise", "full")

__all__ = [
    "FORMATS",
    "HUMAN_FORMATS",
    "WRITERS",
    "FixAdvice",
    "OutputContext",
    "Writer",
    "escape",
    "fix_listing",
    "statistics",
    "summary",
    "use_colour",
]
