"""Writes docs/rules/<CODE>.md from the rules' own documentation: `python -m tensorlint.docs`."""

from __future__ import annotations

import sys
from pathlib import Path

from tensorlint.rule import Rule
from tensorlint.rules import all_rules

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"


def default_state(rule: type[Rule]) -> str:
    return "enabled" if rule.default_enabled else "opt-in"


def rule_record(rule: type[Rule]) -> dict[str, object]:
    """One rule as `tensorlint rules --output-format json` prints it (ruff's field names, where they exist)."""
    return {
        "code": rule.code,
        "name": rule.name,
        "linter": "tensorlint",
        "summary": rule.summary,
        "default": default_state(rule),
        "fix_availability": rule.fix_availability,
        "severity": rule.severity,
        "preview": False,
        "url": rule.url(),
        "explanation": rule.documentation(),
    }


def render_index() -> str:
    lines = ["# Rules", "", "| code | name | summary | default | fix |", "|---|---|---|---|---|"]
    for rule in all_rules():
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.summary} | {default_state(rule)} "
            f"| {rule.fix_availability} |"
        )
    lines += [
        "",
        'Opt-in rules run only when selected by code or prefix, e.g. `extend-select = ["TL900"]`.',
        "Codes are `TL` and three digits and never change meaning; `TL9xx` codes are about",
        "tensorlint's own comments rather than PyTorch code.",
    ]
    return "\n".join(lines) + "\n"


def render_table() -> str:
    """`tensorlint rules`: the same facts as the index, as aligned text."""
    rows = [("code", "name", "default", "fix", "summary")]
    rows += [(r.code, r.name, default_state(r), r.fix_availability, r.summary) for r in all_rules()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + f"  {row[4]}\n" for row in rows
    )


def pages() -> dict[str, str]:
    """File name -> content, for every generated page."""
    result = {f"{rule.code}.md": rule.documentation() for rule in all_rules()}
    result["README.md"] = render_index()
    return result


def main(target: Path = DOCS_DIR) -> int:
    target.mkdir(parents=True, exist_ok=True)
    for name, content in pages().items():
        (target / name).write_text(content, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS_DIR))
