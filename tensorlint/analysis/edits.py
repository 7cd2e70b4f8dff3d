"""Small LibCST builders that the rules' fixes share: the rest of the analysis reads code, these
write the nodes that replace it."""

from __future__ import annotations

import libcst as cst

_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def method_call(expr: cst.BaseExpression, method: str) -> cst.Call:
    """`expr.method()`, parenthesising `expr` when it is not atomic: `(a * b).item()`."""
    if not isinstance(expr, _ATOMIC) and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=expr, attr=cst.Name(method)))


def without_argument(call: cst.Call, dropped: cst.Arg) -> cst.Call:
    """The call without one argument, and without a comma dangling after the new last one."""
    args = [arg for arg in call.args if arg is not dropped]
    if args and (call.args[-1] is dropped):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def with_keyword(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """The call with `keyword=value` appended, laid out like the arguments before it."""
    args = list(call.args)
    new = cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if args and isinstance(args[-1].comma, cst.Comma):  # a trailing comma: one argument per line
        separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else space
        new = new.with_changes(comma=args[-1].comma)
        args[-1] = args[-1].with_changes(comma=separator)
    elif args:
        args[-1] = args[-1].with_changes(comma=space)
    return call.with_changes(args=[*args, new])
