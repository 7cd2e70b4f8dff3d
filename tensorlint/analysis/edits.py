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
    if args and type(args[-1].comma) is cst.Comma:  # a trailing comma: one argument per line
        separator = args[-2].comma if len(args) > 1 and type(args[-2].comma) is cst.Comma else space
        new = new.with_changes(comma=args[-1].comma)
        args[-1] = args[-1].with_changes(comma=separator)
    elif args:
        args[-1] = args[-1].with_changes(comma=space)
    return call.with_changes(args=[*args, new])


def wrapped_in_with(statement: cst.For | cst.While, context: cst.BaseExpression) -> cst.With:
    """`with context:` around a loop, which moves one level deeper: LibCST indents its body,
    comments and bracketed continuation lines with it; the comments above it stay above `with`."""
    return cst.With(
        items=[cst.WithItem(context)],
        body=cst.IndentedBlock(body=[statement.with_changes(leading_lines=())]),
        leading_lines=statement.leading_lines,
    )


def with_import(module: cst.Module, package: str, before: int) -> cst.Module:
    """The module with `import package` among its top-level imports, above statement `before`:
    just above the first import from that package (`from torch import nn`), else after the last
    import, else after the docstring."""
    body = list(module.body)
    imports = [i for i, statement in enumerate(body[:before]) if _imported_modules(statement)]
    same = [i for i in imports if any(m.split(".")[0] == package for m in _imported_modules(body[i]))]
    line = cst.SimpleStatementLine([cst.Import([cst.ImportAlias(cst.Name(package))])])
    if same:
        at = same[0]  # takes the comments and blank lines above that import
        line = line.with_changes(leading_lines=body[at].leading_lines)
        body[at] = body[at].with_changes(leading_lines=())
    elif imports:
        at = imports[-1] + 1
    else:
        at = 1 if body and _is_docstring(body[0]) and before > 0 else 0
        if at:
            line = line.with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*body[:at], line, *body[at:]])


def _imported_modules(statement: cst.CSTNode) -> list[str]:
    """The absolute modules a top-level line imports from (`import a.b, c`, `from a import b`)."""
    if type(statement) is not cst.SimpleStatementLine:
        return []
    found = []
    for small in statement.body:
        if type(small) is cst.Import:
            found += [cst.Module([]).code_for_node(alias.name) for alias in small.names]
        elif type(small) is cst.ImportFrom and not small.relative and small.module is not None:
            found.append(cst.Module([]).code_for_node(small.module))
    return found


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        type(statement) is cst.SimpleStatementLine
        and len(statement.body) == 1
        and type(statement.body[0]) is cst.Expr
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def with_first_statement(loop: cst.For | cst.While, statement: cst.BaseStatement) -> cst.For | cst.While:
    """The loop with `statement` run first in each iteration (its body must be an indented block)."""
    assert type(loop.body) is cst.IndentedBlock
    return loop.with_changes(body=loop.body.with_changes(body=[statement, *loop.body.body]))
