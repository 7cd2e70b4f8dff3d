"""The rule registry: every module in this package named `tlNNN_*` defines one rule."""

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
        rules.append(found[0])
    rules.sort(key=lambda rule: rule.code)
    codes = [rule.code for rule in rules]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(rules)


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.code == code), None)


def all_codes() -> frozenset[str]:
    return frozenset(rule.code for rule in all_rules())
