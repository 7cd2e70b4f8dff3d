"""The shape every rule has: a code, a name, documentation, examples, and a check over facts."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tensorlint.findings import Applicability
from tensorlint.project import PROJECT_URL

if TYPE_CHECKING:  # the rule table is read without LibCST: only checking needs it
    import libcst as cst

    from tensorlint.analysis import Facts

__all__ = ["DOCS_URL", "Applicability", "NodeFix", "Report", "Rule", "dedent"]  # Applicability: for NodeFix

DOCS_URL = PROJECT_URL + "/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True)
class NodeFix:
    """A fix as rules write it: nodes of the tree and what replaces each.

    The engine turns it into text edits once positions are known: each replacement becomes the
    span where the module's text changes, so replacing the whole `cst.Module` (to add an import,
    see `analysis.with_import`) gives one small edit too. Applying it must make the finding go
    away (the fix tests check that a second pass changes nothing).
    """

    message: str
    applicability: Applicability
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]


@dataclass(frozen=True)
class Report:
    """A finding before it has a position: the node to point at and what to say."""

    node: cst.CSTNode
    message: str
    fix: NodeFix | None = None


class Rule:
    """One rule. The class docstring is its user documentation, in ruff's sections.

    `valid` and `invalid` are code examples: the test suite checks that each invalid one is
    reported by this rule and no valid one is, and the docs show them.
    """

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, reads as "allow <name>"
    summary: ClassVar[str]  # one line, for `tensorlint rules` and SARIF
    fix_availability: ClassVar[str] = "None"  # "Always", "Sometimes" or "None"
    default_enabled: ClassVar[bool] = True  # False: only when selected by code or prefix (`extend-select`)
    severity: ClassVar[str] = "error"  # "error" or "warning", for CI formats (SARIF level, GitHub annotations)
    # Memory that builds up over many steps or calls: not checked in test code, which runs a few
    # (`source.is_test_code`). Crashes and no-ops are reported there all the same.
    grows_over_a_run: ClassVar[bool] = False
    # Reads what the flow pass finds (values, stores, CUDA work), not only the index (units, roles,
    # places): a file where no running rule does is indexed without the walk or its imports.
    reads_flow: ClassVar[bool] = True
    valid: ClassVar[tuple[str, ...]] = ()
    invalid: ClassVar[tuple[str, ...]] = ()

    def check(self, facts: Facts) -> Iterator[Report]:
        raise NotImplementedError

    @classmethod
    def url(cls) -> str:
        return DOCS_URL.format(code=cls.code)

    @classmethod
    def description(cls) -> str:
        """The first paragraph of `## What it does`, on one line: SARIF's fullDescription."""
        doc = textwrap.dedent(cls.__doc__ or "").strip()
        section = doc.split("## What it does", 1)[-1].strip().split("\n\n", 1)[0]
        return " ".join(section.split()) or cls.summary

    @classmethod
    def documentation(cls) -> str:
        """The rule's page, as Markdown: the docs in docs/rules/ are generated from it."""
        doc = textwrap.dedent(cls.__doc__ or "").strip()
        fix = {
            "Always": "Fix is always available.",
            "Sometimes": "Fix is sometimes available.",
        }.get(cls.fix_availability, "This rule reports without a fix.")
        state = (
            "Enabled by default."
            if cls.default_enabled
            else f'Not enabled by default: select it with `extend-select = ["{cls.code}"]`.'
        )
        scope = " Not checked in test code: a test runs a few steps." if cls.grows_over_a_run else ""
        lines = [f"# {cls.name} ({cls.code})", "", f"{cls.summary}", "", f"*{fix} {state}{scope}*", "", doc, ""]
        if cls.invalid or cls.valid:
            lines += ["## Checked examples", ""]
            lines += ["Reported:", ""] + [_code_block(e) for e in cls.invalid]
            lines += ["Not reported:", ""] + [_code_block(e) for e in cls.valid]
        return "\n".join(lines).rstrip() + "\n"


def _code_block(example: str) -> str:
    return f"```python\n{textwrap.dedent(example).strip()}\n```\n"


def dedent(example: str) -> str:
    return textwrap.dedent(example).lstrip("\n")
