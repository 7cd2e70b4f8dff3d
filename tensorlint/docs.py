"""Writes docs/rules/<CODE>.md from the rules' own documentation: `python -m tensorlint.docs`."""

from __future__ import annotations

import sys
from pathlib import Path

from tensorlint.rules import all_rules

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"


def render_index() -> str:
    lines = ["# Rules", "", "| code | name | summary | fix |", "|---|---|---|---|"]
    for rule in all_rules():
        lines.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.summary} | {rule.fix_availability} |")
    return "\n".join(lines) + "\n"


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
