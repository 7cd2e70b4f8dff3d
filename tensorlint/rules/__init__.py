"""The rule registry: every module in this package named `tlNNN_*` defines one rule.

The codes come from the module names, so that selecting rules (and a fully cached run) never
imports the rules, the analysis or LibCST; `all_rules()` imports them when they are needed.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from tensorlint.rule import Rule


@cache
def all_rules() -> tuple[type[Rule], ...]:
    rules: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found = [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, Rule)
            and value is not Rule
            and value.__module__ == module.__name__
        ]
        if len(found) != 1:
            raise RuntimeError(f"{module.__name__} must define exactly one rule, found {len(found)}")
        rule = found[0]
        if rule.code != info.name[:5].upper() or rule.default_enabled == (rule.code in OPT_IN_CODES):
            raise RuntimeError(f"{module.__name__}: code or default state disagrees with its name or OPT_IN_CODES")
        rules.append(rule)
    rules.sort(key=lambda rule: rule.code)
    codes = [rule.code for rule in rules]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(rules)


# Rules off until selected (`Rule.default_enabled = False`); tests check the two agree.
OPT_IN_CODES = frozenset({"TL017", "TL018", "TL019", "TL900"})


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.code == code), None)


@cache
def all_codes() -> frozenset[str]:
    """Every rule's code, read from the module names (`tl001_...` is TL001) without importing them."""
    return frozenset(info.name[:5].upper() for info in pkgutil.iter_modules(__path__) if info.name.startswith("tl"))


def default_codes() -> tuple[str, ...]:
    """The codes enabled when nothing is selected."""
    return tuple(sorted(all_codes() - OPT_IN_CODES))
