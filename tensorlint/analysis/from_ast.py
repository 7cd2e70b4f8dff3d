# The node constructors are generated at run time (`_N`), so mypy sees them return Any.
# mypy: disable-error-code="no-any-return"
"""LibCST trees built from Python's own parser, for a first analysis of a file.

LibCST's parser keeps every space, comment and parenthesis, and costs about seven times
`ast.parse`: it was most of a cold run. The analysis never reads those (`walk.py` skips the
fields that hold them), so a file is first analysed on a tree that Python's parser (C) builds
and this module turns into LibCST's own node classes, whitespace left at LibCST's defaults.
Only a file whose first analysis gives a finding is parsed again by LibCST and analysed again
(`engine.py`): positions, fixes and the code that messages quote come from the text as written.

The built tree has LibCST's nodes, fields and order for the same text, except where Python's
parser forgets the spelling: strings and numbers are written as `repr` writes them, implicit
concatenations are one string, and `x[(a, b)]` is `x[a, b]`. `tests/test_from_ast.py` compares
the two trees on every fixture. Syntax this module does not build (`match`, type parameters)
gives None, and the caller parses with LibCST.
"""

from __future__ import annotations

import ast
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

_NEW = object.__new__


class Unsupported(Exception):
    """Syntax that this module does not build: the caller parses with LibCST."""


def _constructor(kind: type) -> Callable[..., Any]:
    """A function that makes a `kind` node from its code fields, every other field at its default.

    Generated like a dataclass's `__init__`, without validation and with the defaults made once
    and shared: a tree built here is only read, and making a fresh `SimpleWhitespace` for every
    field of every node was most of the cost."""
    defaults: dict[str, object] = {}
    parameters, body = [], []
    for field in dataclasses.fields(kind):
        if field.default is not dataclasses.MISSING:
            defaults[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            defaults[field.name] = field.default_factory()
        parameters.append(f"{field.name}=_d_{field.name}" if field.name in defaults else field.name)
        body.append(f" _set_{field.name}(node, {field.name})")
    namespace: dict[str, object] = {f"_d_{name}": value for name, value in defaults.items()}
    # Each field's slot written through its descriptor: `object.__setattr__` would look it up first.
    namespace.update({f"_set_{f.name}": getattr(kind, f.name).__set__ for f in dataclasses.fields(kind)})
    namespace.update(_new=_NEW, _kind=kind)
    # Keyword-only parameters: required ones may follow those with defaults, in field order.
    signature = f"*, {', '.join(parameters)}" if parameters else ""
    source = f"def make({signature}):\n node = _new(_kind)\n" + "\n".join(body) + "\n return node\n"
    exec(source, namespace)  # the text above, made from the dataclass's own fields
    return namespace["make"]  # type: ignore[return-value]


class _Nodes:
    """`_N.Name(value="x")`: each LibCST class's constructor, generated on first use."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        make = _constructor(getattr(cst, name))
        setattr(self, name, make)
        return make


_N = _Nodes()

_OPERATORS: dict[type, str] = {
    ast.Add: "Add",
    ast.Sub: "Subtract",
    ast.Mult: "Multiply",
    ast.MatMult: "MatrixMultiply",
    ast.Div: "Divide",
    ast.Mod: "Modulo",
    ast.Pow: "Power",
    ast.LShift: "LeftShift",
    ast.RShift: "RightShift",
    ast.BitOr: "BitOr",
    ast.BitXor: "BitXor",
    ast.BitAnd: "BitAnd",
    ast.FloorDiv: "FloorDivide",
    ast.Not: "Not",
    ast.USub: "Minus",
    ast.UAdd: "Plus",
    ast.Invert: "BitInvert",
    ast.And: "And",
    ast.Or: "Or",
    ast.Eq: "Equal",
    ast.NotEq: "NotEqual",
    ast.Lt: "LessThan",
    ast.LtE: "LessThanEqual",
    ast.Gt: "GreaterThan",
    ast.GtE: "GreaterThanEqual",
    ast.Is: "Is",
    ast.IsNot: "IsNot",
    ast.In: "In",
    ast.NotIn: "NotIn",
}
# Operators carry only whitespace: one node of each serves the whole tree.
_OPERATOR = {kind: getattr(_N, name)() for kind, name in _OPERATORS.items()}
_AUGMENTED = {
    kind: getattr(_N, name + "Assign")() for kind, name in _OPERATORS.items() if hasattr(cst, name + "Assign")
}
_ASYNC = _N.Asynchronous()
_SIMPLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Return,
    ast.Delete,
    ast.Pass,
    ast.Break,
    ast.Continue,
    ast.Raise,
    ast.Assert,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)


def build_module(source: str) -> cst.Module | None:
    """The LibCST tree of `source` built from `ast.parse`, or None where this module cannot build
    it the same (the caller parses with LibCST, which also reports syntax errors its own way)."""
    try:
        tree = ast.parse(source)
        return _N.Module(body=_Builder(source).statements(tree.body))
    except (SyntaxError, ValueError, RecursionError, MemoryError, Unsupported):
        return None


class _Builder:
    def __init__(self, source: str) -> None:
        # Bytes, because `col_offset` counts UTF-8 bytes: only whether a statement's line is blank
        # before it is asked (a `;` or a `:` precedes it there).
        self._lines = source.encode("utf-8", "surrogatepass").splitlines()
        self._expressions: dict[type, Callable[[Any], Any]] = {
            ast.Name: self._name,
            ast.Attribute: self._attribute,
            ast.Call: self._call,
            ast.Constant: self._constant,
            ast.Subscript: self._subscript,
            ast.BinOp: self._binary,
            ast.UnaryOp: self._unary,
            ast.BoolOp: self._boolean,
            ast.Compare: self._compare,
            ast.Tuple: self._tuple,
            ast.List: self._list,
            ast.Set: self._set,
            ast.Dict: self._dict,
            ast.Lambda: self._lambda,
            ast.IfExp: self._if_expression,
            ast.NamedExpr: self._named,
            ast.Await: self._await,
            ast.Yield: self._yield,
            ast.YieldFrom: self._yield_from,
            ast.ListComp: self._list_comprehension,
            ast.SetComp: self._set_comprehension,
            ast.GeneratorExp: self._generator,
            ast.DictComp: self._dict_comprehension,
            ast.JoinedStr: self._formatted_string,
            ast.Starred: self._starred,
            ast.Slice: self._slice_alone,
        }
        self._statements: dict[type, Callable[[Any], Any]] = {
            ast.Expr: self._expression_statement,
            ast.Assign: self._assign,
            ast.AugAssign: self._augmented,
            ast.AnnAssign: self._annotated,
            ast.Return: self._return,
            ast.Delete: self._delete,
            ast.Pass: lambda node: _N.Pass(),
            ast.Break: lambda node: _N.Break(),
            ast.Continue: lambda node: _N.Continue(),
            ast.Raise: self._raise,
            ast.Assert: self._assert,
            ast.Import: self._import,
            ast.ImportFrom: self._import_from,
            ast.Global: lambda node: _N.Global(names=[_N.NameItem(name=_N.Name(value=n)) for n in node.names]),
            ast.Nonlocal: lambda node: _N.Nonlocal(names=[_N.NameItem(name=_N.Name(value=n)) for n in node.names]),
            ast.If: self._if,
            ast.For: self._for,
            ast.AsyncFor: self._for,
            ast.While: self._while,
            ast.With: self._with,
            ast.AsyncWith: self._with,
            ast.Try: self._try,
            ast.FunctionDef: self._function,
            ast.AsyncFunctionDef: self._function,
            ast.ClassDef: self._class,
        }
        if sys.version_info >= (3, 11):
            self._statements[ast.TryStar] = self._try

    # Statements and blocks.

    def statements(self, nodes: Sequence[ast.stmt]) -> list[cst.BaseStatement]:
        """Statements as LibCST groups them: simple statements on one line (`a; b`) share a line."""
        built: list[cst.BaseStatement] = []
        line: list[cst.BaseSmallStatement] | None = None
        for node in nodes:
            if not isinstance(node, _SIMPLE):
                built.append(self._statement(node))
                line = None
            elif line is not None and self._follows_on_its_line(node):
                line.append(self._statement(node))
            else:
                line = [self._statement(node)]
                built.append(_N.SimpleStatementLine(body=line))
        return built

    def _statement(self, node: ast.stmt) -> Any:
        make = self._statements.get(type(node))
        if make is None:  # `match`, `type X = ...`
            raise Unsupported(type(node).__name__)
        return make(node)

    def _follows_on_its_line(self, node: ast.stmt) -> bool:
        """Whether code precedes the statement on its line (a `;` or a compound statement's `:`)."""
        return bool(self._lines[node.lineno - 1][: node.col_offset].strip())

    def _block(self, nodes: Sequence[ast.stmt]) -> cst.BaseSuite:
        if isinstance(nodes[0], _SIMPLE) and self._follows_on_its_line(nodes[0]):  # `if x: return`
            return _N.SimpleStatementSuite(body=[self._statement(node) for node in nodes])
        return _N.IndentedBlock(body=self.statements(nodes))

    def _else(self, nodes: Sequence[ast.stmt]) -> cst.Else | None:
        return _N.Else(body=self._block(nodes)) if nodes else None

    def _if(self, node: ast.If) -> cst.If:
        orelse: cst.If | cst.Else | None
        if (
            len(node.orelse) == 1
            and isinstance(node.orelse[0], ast.If)
            and node.orelse[0].col_offset == node.col_offset
        ):
            orelse = self._if(node.orelse[0])  # `elif`: at the column of its `if` (an `if` inside `else:` is indented)
        else:
            orelse = self._else(node.orelse)
        return _N.If(test=self.expression(node.test), body=self._block(node.body), orelse=orelse)

    def _for(self, node: ast.For | ast.AsyncFor) -> cst.For:
        return _N.For(
            target=self.expression(node.target),
            iter=self.expression(node.iter),
            body=self._block(node.body),
            orelse=self._else(node.orelse),
            asynchronous=_ASYNC if isinstance(node, ast.AsyncFor) else None,
        )

    def _while(self, node: ast.While) -> cst.While:
        return _N.While(test=self.expression(node.test), body=self._block(node.body), orelse=self._else(node.orelse))

    def _with(self, node: ast.With | ast.AsyncWith) -> cst.With:
        items = [
            _N.WithItem(
                item=self.expression(item.context_expr),
                asname=_N.AsName(name=self.expression(item.optional_vars)) if item.optional_vars else None,
            )
            for item in node.items
        ]
        return _N.With(
            items=items, body=self._block(node.body), asynchronous=_ASYNC if isinstance(node, ast.AsyncWith) else None
        )

    def _try(self, node: Any) -> cst.Try | cst.TryStar:
        star = type(node).__name__ == "TryStar"
        handler = _N.ExceptStarHandler if star else _N.ExceptHandler
        handlers = [
            handler(
                body=self._block(h.body),
                type=self.expression(h.type) if h.type else None,
                name=_N.AsName(name=_N.Name(value=h.name)) if h.name else None,
            )
            for h in node.handlers
        ]
        final = _N.Finally(body=self._block(node.finalbody)) if node.finalbody else None
        return (_N.TryStar if star else _N.Try)(
            body=self._block(node.body), handlers=handlers, orelse=self._else(node.orelse), finalbody=final
        )

    def _decorators(self, nodes: Sequence[ast.expr]) -> list[cst.Decorator]:
        return [_N.Decorator(decorator=self.expression(d)) for d in nodes]

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> cst.FunctionDef:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _N.FunctionDef(
            name=_N.Name(value=node.name),
            params=self._parameters(node.args),
            body=self._block(node.body),
            decorators=self._decorators(node.decorator_list),
            returns=_N.Annotation(annotation=self.expression(node.returns)) if node.returns else None,
            asynchronous=_ASYNC if isinstance(node, ast.AsyncFunctionDef) else None,
        )

    def _class(self, node: ast.ClassDef) -> cst.ClassDef:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _N.ClassDef(
            name=_N.Name(value=node.name),
            body=self._block(node.body),
            bases=[self._argument(base) for base in node.bases],
            keywords=[self._keyword(keyword) for keyword in node.keywords],
            decorators=self._decorators(node.decorator_list),
        )

    def _parameters(self, node: ast.arguments) -> cst.Parameters:
        def param(arg: ast.arg, default: ast.expr | None = None, star: str = "") -> cst.Param:
            annotation = _N.Annotation(annotation=self.expression(arg.annotation)) if arg.annotation else None
            return _N.Param(
                name=_N.Name(value=arg.arg),
                annotation=annotation,
                default=self.expression(default) if default is not None else None,
                star=star,
            )

        positional = [*node.posonlyargs, *node.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(node.defaults)) + list(node.defaults)
        built = [param(arg, default) for arg, default in zip(positional, defaults, strict=True)]
        star_arg: Any = cst.MaybeSentinel.DEFAULT
        if node.vararg:
            star_arg = param(node.vararg, star="*")
        elif node.kwonlyargs:
            star_arg = _N.ParamStar()
        return _N.Parameters(
            params=built[len(node.posonlyargs) :],
            star_arg=star_arg,
            kwonly_params=[param(arg, default) for arg, default in zip(node.kwonlyargs, node.kw_defaults, strict=True)],
            star_kwarg=param(node.kwarg, star="**") if node.kwarg else None,
            posonly_params=built[: len(node.posonlyargs)],
            posonly_ind=_N.ParamSlash() if node.posonlyargs else cst.MaybeSentinel.DEFAULT,
        )

    # Simple statements.

    def _expression_statement(self, node: ast.Expr) -> cst.Expr:
        return _N.Expr(value=self.expression(node.value))

    def _assign(self, node: ast.Assign) -> cst.Assign:
        targets = [_N.AssignTarget(target=self.expression(target)) for target in node.targets]
        return _N.Assign(targets=targets, value=self.expression(node.value))

    def _augmented(self, node: ast.AugAssign) -> cst.AugAssign:
        return _N.AugAssign(
            target=self.expression(node.target), operator=_AUGMENTED[type(node.op)], value=self.expression(node.value)
        )

    def _annotated(self, node: ast.AnnAssign) -> cst.AnnAssign:
        return _N.AnnAssign(
            target=self.expression(node.target),
            annotation=_N.Annotation(annotation=self.expression(node.annotation)),
            value=self.expression(node.value) if node.value else None,
        )

    def _return(self, node: ast.Return) -> cst.Return:
        return _N.Return(value=self.expression(node.value) if node.value else None)

    def _delete(self, node: ast.Delete) -> cst.Del:
        if len(node.targets) == 1:
            return _N.Del(target=self.expression(node.targets[0]))
        return _N.Del(target=_N.Tuple(elements=[_N.Element(value=self.expression(t)) for t in node.targets], lpar=()))

    def _raise(self, node: ast.Raise) -> cst.Raise:
        return _N.Raise(
            exc=self.expression(node.exc) if node.exc else None,
            cause=_N.From(item=self.expression(node.cause)) if node.cause else None,
        )

    def _assert(self, node: ast.Assert) -> cst.Assert:
        return _N.Assert(test=self.expression(node.test), msg=self.expression(node.msg) if node.msg else None)

    def _alias(self, alias: ast.alias) -> cst.ImportAlias:
        asname = _N.AsName(name=_N.Name(value=alias.asname)) if alias.asname else None
        return _N.ImportAlias(name=_dotted(alias.name), asname=asname)

    def _import(self, node: ast.Import) -> cst.Import:
        return _N.Import(names=[self._alias(alias) for alias in node.names])

    def _import_from(self, node: ast.ImportFrom) -> cst.ImportFrom:
        star = len(node.names) == 1 and node.names[0].name == "*"
        return _N.ImportFrom(
            module=_dotted(node.module) if node.module else None,
            names=_N.ImportStar() if star else [self._alias(alias) for alias in node.names],
            relative=[_N.Dot() for _ in range(node.level or 0)],
        )

    # Expressions.

    def expression(self, node: ast.expr) -> Any:
        make = self._expressions.get(type(node))
        if make is None:
            raise Unsupported(type(node).__name__)
        return make(node)

    def _name(self, node: ast.Name) -> cst.Name:
        return _N.Name(value=node.id)

    def _attribute(self, node: ast.Attribute) -> cst.Attribute:
        return _N.Attribute(value=self.expression(node.value), attr=_N.Name(value=node.attr))

    def _argument(self, node: ast.expr) -> cst.Arg:
        if isinstance(node, ast.Starred):
            return _N.Arg(value=self.expression(node.value), star="*")
        return _N.Arg(value=self.expression(node))

    def _keyword(self, node: ast.keyword) -> cst.Arg:
        if node.arg is None:
            return _N.Arg(value=self.expression(node.value), star="**")
        return _N.Arg(value=self.expression(node.value), keyword=_N.Name(value=node.arg))

    def _call(self, node: ast.Call) -> cst.Call:
        arguments: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
        if node.args and node.keywords:  # `f(a, k=1, *rest)`: LibCST keeps the order of the text
            arguments.sort(key=lambda a: (a.lineno, a.col_offset))
        args = [self._keyword(a) if isinstance(a, ast.keyword) else self._argument(a) for a in arguments]
        return _N.Call(func=self.expression(node.func), args=args)

    def _constant(self, node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        if isinstance(value, str | bytes):
            return _N.SimpleString(value=repr(value))
        if value is None or isinstance(value, bool):
            return _N.Name(value=str(value))
        if isinstance(value, int):
            return _N.Integer(value=str(value))
        if isinstance(value, float):
            return _N.Float(value=repr(value))
        if isinstance(value, complex):
            return _N.Imaginary(value=repr(value))
        if value is Ellipsis:
            return _N.Ellipsis()
        raise Unsupported(type(value).__name__)

    def _subscript(self, node: ast.Subscript) -> cst.Subscript:
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) and index.elts else [index]
        return _N.Subscript(
            value=self.expression(node.value), slice=[_N.SubscriptElement(slice=self._index(p)) for p in parts]
        )

    def _index(self, node: ast.expr) -> cst.BaseSlice:
        if isinstance(node, ast.Slice):
            return self._slice_alone(node)
        if isinstance(node, ast.Starred):
            return _N.Index(value=self.expression(node.value), star="*")
        return _N.Index(value=self.expression(node))

    def _slice_alone(self, node: ast.Slice) -> cst.Slice:
        return _N.Slice(
            lower=self.expression(node.lower) if node.lower else None,
            upper=self.expression(node.upper) if node.upper else None,
            step=self.expression(node.step) if node.step else None,
        )

    def _binary(self, node: ast.BinOp) -> cst.BinaryOperation:
        return _N.BinaryOperation(
            left=self.expression(node.left), operator=_OPERATOR[type(node.op)], right=self.expression(node.right)
        )

    def _unary(self, node: ast.UnaryOp) -> cst.UnaryOperation:
        return _N.UnaryOperation(operator=_OPERATOR[type(node.op)], expression=self.expression(node.operand))

    def _boolean(self, node: ast.BoolOp) -> cst.BooleanOperation:
        """`a and b and c` is `(a and b) and c` in LibCST."""
        operator = _OPERATOR[type(node.op)]
        built = self.expression(node.values[0])
        for value in node.values[1:]:
            built = _N.BooleanOperation(left=built, operator=operator, right=self.expression(value))
        return built

    def _compare(self, node: ast.Compare) -> cst.Comparison:
        targets = [
            _N.ComparisonTarget(operator=_OPERATOR[type(op)], comparator=self.expression(value))
            for op, value in zip(node.ops, node.comparators, strict=True)
        ]
        return _N.Comparison(left=self.expression(node.left), comparisons=targets)

    def _elements(self, nodes: Sequence[ast.expr]) -> list[cst.BaseElement]:
        return [
            _N.StarredElement(value=self.expression(n.value))
            if isinstance(n, ast.Starred)
            else _N.Element(value=self.expression(n))
            for n in nodes
        ]

    def _tuple(self, node: ast.Tuple) -> cst.Tuple:
        return _N.Tuple(elements=self._elements(node.elts))

    def _list(self, node: ast.List) -> cst.List:
        return _N.List(elements=self._elements(node.elts))

    def _set(self, node: ast.Set) -> cst.Set:
        return _N.Set(elements=self._elements(node.elts))

    def _dict(self, node: ast.Dict) -> cst.Dict:
        elements = [
            _N.StarredDictElement(value=self.expression(value))
            if key is None
            else _N.DictElement(key=self.expression(key), value=self.expression(value))
            for key, value in zip(node.keys, node.values, strict=True)
        ]
        return _N.Dict(elements=elements)

    def _starred(self, node: ast.Starred) -> cst.StarredElement:
        return _N.StarredElement(value=self.expression(node.value))

    def _lambda(self, node: ast.Lambda) -> cst.Lambda:
        return _N.Lambda(params=self._parameters(node.args), body=self.expression(node.body))

    def _if_expression(self, node: ast.IfExp) -> cst.IfExp:
        return _N.IfExp(
            test=self.expression(node.test), body=self.expression(node.body), orelse=self.expression(node.orelse)
        )

    def _named(self, node: ast.NamedExpr) -> cst.NamedExpr:
        return _N.NamedExpr(target=self.expression(node.target), value=self.expression(node.value))

    def _await(self, node: ast.Await) -> cst.Await:
        return _N.Await(expression=self.expression(node.value))

    def _yield(self, node: ast.Yield) -> cst.Yield:
        return _N.Yield(value=self.expression(node.value) if node.value else None)

    def _yield_from(self, node: ast.YieldFrom) -> cst.Yield:
        return _N.Yield(value=_N.From(item=self.expression(node.value)))

    def _for_in(self, generators: Sequence[ast.comprehension]) -> cst.CompFor:
        inner = None
        for generator in reversed(generators):
            inner = _N.CompFor(
                target=self.expression(generator.target),
                iter=self.expression(generator.iter),
                ifs=[_N.CompIf(test=self.expression(test)) for test in generator.ifs],
                inner_for_in=inner,
                asynchronous=_ASYNC if generator.is_async else None,
            )
        return inner  # type: ignore[return-value]

    def _list_comprehension(self, node: ast.ListComp) -> cst.ListComp:
        return _N.ListComp(elt=self.expression(node.elt), for_in=self._for_in(node.generators))

    def _set_comprehension(self, node: ast.SetComp) -> cst.SetComp:
        return _N.SetComp(elt=self.expression(node.elt), for_in=self._for_in(node.generators))

    def _generator(self, node: ast.GeneratorExp) -> cst.GeneratorExp:
        return _N.GeneratorExp(elt=self.expression(node.elt), for_in=self._for_in(node.generators))

    def _dict_comprehension(self, node: ast.DictComp) -> cst.DictComp:
        return _N.DictComp(
            key=self.expression(node.key), value=self.expression(node.value), for_in=self._for_in(node.generators)
        )

    def _formatted_string(self, node: ast.JoinedStr) -> cst.FormattedString:
        return _N.FormattedString(parts=self._formatted_parts(node.values))

    def _formatted_parts(self, values: Sequence[ast.expr]) -> list[cst.BaseFormattedStringContent]:
        parts: list[cst.BaseFormattedStringContent] = []
        for value in values:
            if isinstance(value, ast.Constant):
                text = str(value.value).replace("{", "{{").replace("}", "}}")
                parts.append(_N.FormattedStringText(value=text))
            elif isinstance(value, ast.FormattedValue):
                spec = value.format_spec
                parts.append(
                    _N.FormattedStringExpression(
                        expression=self.expression(value.value),
                        conversion=chr(value.conversion) if value.conversion > 0 else None,
                        format_spec=self._formatted_parts(spec.values) if isinstance(spec, ast.JoinedStr) else None,
                    )
                )
            else:
                raise Unsupported(type(value).__name__)
        return parts


def _dotted(name: str) -> cst.Name | cst.Attribute:
    """`a.b.c` as LibCST writes a module name: attributes of attributes of a name."""
    first, *rest = name.split(".")
    built: cst.Name | cst.Attribute = _N.Name(value=first)
    for part in rest:
        built = _N.Attribute(value=built, attr=_N.Name(value=part))
    return built
