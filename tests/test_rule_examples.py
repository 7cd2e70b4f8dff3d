"""Each rule's embedded examples, which are also its documentation, hold."""

from __future__ import annotations

import pytest

from tensorlint.engine import lint_source
from tensorlint.rule import Rule, dedent
from tensorlint.rules import all_rules

CASES = [
    pytest.param(rule, kind, example, id=f"{rule.code}-{kind}-{index}")
    for rule in all_rules()
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for index, example in enumerate(examples)
]


@pytest.mark.parametrize(("rule", "kind", "example"), CASES)
def test_embedded_example(rule: type[Rule], kind: str, example: str) -> None:
    codes = [f.code for f in lint_source(dedent(example), "example.py")]
    if kind == "invalid":
        assert rule.code in codes
    else:
        assert codes == []


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_documented_in_ruff_sections(rule: type[Rule]) -> None:
    doc = rule.documentation()
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "Use instead:",
        "## Fix safety",
        "## References",
    ):
        assert section in doc, section
    assert rule.invalid and rule.valid
    assert rule.name == rule.name.lower() and " " not in rule.name
