"""TL900: a `# noqa: TLxxx` comment that suppresses nothing (ruff's RUF100, for tensorlint codes).

TL9xx codes are reserved for findings about tensorlint's own directives, not about PyTorch
code. The engine reports this one, since it needs every rule's findings before suppression.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from tensorlint.analysis import Facts
from tensorlint.findings import Applicability, Edit, Finding, Fix, Location
from tensorlint.noqa import NOQA_INLINE, Directive, Suppressions
from tensorlint.rule import Report, Rule
from tensorlint.rules import all_codes

# Codes of other tools (`E501`, `F401`) in the same comment belong to them, never reported here.
OWN_PREFIX = "TL"


class UnusedNoqa(Rule):
    """
    ## What it does
    Checks for `# noqa` comments that name tensorlint codes (`TLxxx`) which suppress nothing
    on their statement: the finding was fixed or moved, the code is misspelt or unknown, or
    the rule is not enabled for the file.

    Only the `TL` codes of a comment are checked: `# noqa: E501, TL004` is left to ruff or
    flake8 for `E501`. A blanket `# noqa` is never reported, since it may be there for another
    tool. File-level `# tensorlint: noqa` comments are not checked.

    ## Why is this bad?
    A stale suppression hides the next real leak on that line, and a misspelt one (`TL04`)
    never suppressed anything. As with ruff's `RUF100`, the comment should go.

    ## Example
    ```python
    for x, y in loader:
        total += loss_fn(model(x), y).item()  # noqa: TL004
    ```

    Use instead:
    ```python
    for x, y in loader:
        total += loss_fn(model(x), y).item()
    ```

    ## Fix safety
    The fix removes the unused codes from the comment, or the whole comment when nothing of
    it is left. It is safe: it changes no code, only which findings are shown. Where text
    follows the directive in the same comment, the comment is left alone and no fix is offered.

    ## Coexisting with ruff
    ruff's own `RUF100` flags `TL` codes as unknown unless told they belong to another tool:
    set `lint.external = ["TL"]` in `[tool.ruff]`. This rule runs only in the `tensorlint`
    command: under flake8, flake8 owns `# noqa`.

    ## References
    - ruff's `unused-noqa (RUF100)`: https://docs.astral.sh/ruff/rules/unused-noqa/
    - flake8's `# noqa` syntax: https://flake8.pycqa.org/en/latest/user/violations.html
    """

    code = "TL900"
    name = "unused-noqa"
    summary = "`# noqa` comment with tensorlint codes that suppress nothing"
    fix_availability = "Sometimes"
    default_enabled = False  # opt-in, as RUF100 is in ruff
    severity = "warning"  # about a comment, not a leak
    invalid = (
        """
        import torch
        from torch import nn

        model = nn.Linear(4, 2)

        def evaluate(loader):
            total = 0.0
            for x, y in loader:
                total += nn.functional.cross_entropy(model(x), y).item()  # noqa: TL004
            return total
        """,
        """
        import torch

        x = torch.zeros(3)  # noqa: E501, TL999
        """,
    )
    valid = (
        """
        import torch
        from torch import nn

        model = nn.Linear(4, 2)

        def evaluate(loader):
            total = 0.0
            for x, y in loader:
                total += nn.functional.cross_entropy(model(x), y)  # noqa: TL004
            return total
        """,
        """
        import torch

        x = torch.zeros(3)  # noqa: E501
        y = "# noqa: TL001"
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        return iter(())  # reported by `unused_directives`, called from the engine

    @staticmethod
    def may_apply(source: str) -> bool:
        """Whether any `# noqa` names a TL code: only those can be unused (reading every
        directive's place takes a tokenizer pass, which most files need not pay)."""
        return any(OWN_PREFIX in (match.group("codes") or "").upper() for match in NOQA_INLINE.finditer(source))

    @classmethod
    def unused_directives(
        cls,
        suppressions: Suppressions,
        findings: Sequence[Finding],
        enabled: Collection[str],
        filename: str,
        lines: Sequence[str],
    ) -> list[Finding]:
        """A finding for each `# noqa` whose TL codes suppress none of `findings` (taken before noqa)."""
        known = all_codes()
        reported = []
        for directive in suppressions.directives:
            if not directive.in_comment:
                continue  # `"# noqa: TL001"` in a string is text, whatever flake8 makes of it
            own = [code for code in directive.codes if code.startswith(OWN_PREFIX) and code != cls.code]
            used = {f.code for f in findings if f.code and directive.covers(f.location.row)}
            unknown = [code for code in own if code not in known]
            disabled = [code for code in own if code in known and code not in enabled]
            unused = [code for code in own if code in known and code in enabled and code not in used]
            if not (unknown or disabled or unused):
                continue
            parts = [
                f"{label}: {', '.join(f'`{code}`' for code in codes)}"
                for label, codes in (("unused", unused), ("non-enabled", disabled), ("unknown", unknown))
                if codes
            ]
            removed = {*unknown, *disabled, *unused}
            line = lines[directive.row - 1] if directive.row <= len(lines) else ""
            reported.append(
                Finding(
                    code=cls.code,
                    message=f"Unused `noqa` directive ({'; '.join(parts)})",
                    filename=filename,
                    location=Location(directive.row, directive.column),
                    end_location=Location(directive.row, directive.end_column),
                    fix=_removal(directive, [c for c in directive.codes if c not in removed], line),
                )
            )
        return reported


def _removal(directive: Directive, kept: list[str], line: str) -> Fix | None:
    """Rewrite the directive with the codes it still needs, or drop it; None where that is unsafe."""
    start, end = directive.column - 1, directive.end_column - 1
    rest = line[end:].rstrip("\r\n")
    if kept:
        return Fix(
            f"Remove unused codes from `noqa` directive: keep {', '.join(kept)}",
            Applicability.SAFE,
            (_replace(directive.row, start, end, f"# noqa: {', '.join(kept)}"),),
        )
    if rest.strip():
        return None  # text follows in the same comment: removing the directive would change it
    code_end = len(line[:start].rstrip())
    return Fix(
        "Remove unused `noqa` directive",
        Applicability.SAFE,
        (_replace(directive.row, code_end, len(line[:end]) + len(rest), ""),),
    )


def _replace(row: int, start: int, end: int, content: str) -> Edit:
    return Edit(content, Location(row, start + 1), Location(row, end + 1))
