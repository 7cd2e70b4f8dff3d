"""The editor front-end: a language server on pygls (`tensorlint server`).

It lints the buffer's text with the same core as the CLI, publishes diagnostics on open,
save and (debounced) change, and offers code actions built from the findings: each fix as a
quick fix, "disable for this line" (`# noqa: CODE`, one action for all the codes of a line),
and `source.fixAll.tensorlint` (unsafe fixes only with the `unsafeFixes` setting, as in ruff).

Positions go out in the encoding negotiated at `initialize`: UTF-8 when the client offers it
(as ruff's server does), else UTF-32 if offered, else UTF-16, LSP's default; findings count
columns in characters.
Start-up stays light: the engine, the rules and LibCST are imported when a document is linted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path
from pygls.workspace import PositionCodec

from tensorlint import __version__
from tensorlint.add_noqa import add_noqa_to_source
from tensorlint.config import ConfigError, find_pyproject, load_config
from tensorlint.findings import Applicability, Finding, Location
from tensorlint.rules import default_codes
from tensorlint.text import split_lines

DEBOUNCE_SECONDS = 0.3
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.tensorlint"
# The encodings the server speaks, best first: UTF-8 whenever offered, UTF-16 always (LSP's default).
ENCODINGS = (types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf32, types.PositionEncodingKind.Utf16)


class TensorlintProtocol(LanguageServerProtocol):
    """pygls' protocol, choosing the position encoding by the server's preference, not the client's order."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            # pygls takes the first encoding it knows in the client's list: put ours first.
            offered = list(general.position_encodings)
            preferred = [e for e in ENCODINGS if e in offered]
            general.position_encodings = preferred + [e for e in offered if e not in preferred]
        return (yield from super().lsp_initialize(params))


class TensorlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tensorlint", __version__, protocol_cls=TensorlintProtocol)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.unsafe_fixes = False  # the `unsafeFixes` setting: fix-all applies unsafe fixes too
        self.config_problems: set[str] = set()  # configuration errors already shown to the user


server = TensorlintServer()


def unsafe_fixes_setting(options: object) -> bool | None:
    """`unsafeFixes` from initialization options or settings: `{"unsafeFixes": true}`, or nested
    under `settings` (ruff's shape) or `tensorlint`; None when it is not there."""
    if not isinstance(options, dict):
        return None
    for nested in ("settings", "tensorlint"):
        found = unsafe_fixes_setting(options.get(nested))
        if found is not None:
            return found
    value = options.get("unsafeFixes")
    return value if isinstance(value, bool) else None


def _codes(uri: str) -> frozenset[str]:
    """The codes the nearest pyproject.toml selects for this file; the defaults when it has no
    path or its configuration is broken (which the user is told about once)."""
    path = to_fs_path(uri)
    if path is None:
        return frozenset(default_codes())
    try:
        config = load_config(find_pyproject(Path(path).parent))
    except ConfigError as error:
        _tell_once(f"tensorlint: {error}; using the default rules until it is fixed")
        return frozenset(default_codes())
    if config.source is not None:  # fixed: a new mistake in that file is shown again
        server.config_problems = {p for p in server.config_problems if str(config.source) not in p}
    return config.codes_for(Path(path))


def _tell_once(message: str) -> None:
    """Show a problem in the editor's window (and log it) the first time it happens."""
    if message in server.config_problems:
        return
    server.config_problems.add(message)
    server.window_log_message(types.LogMessageParams(types.MessageType.Error, message))
    server.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))


def _findings(uri: str, source: str) -> list[Finding]:
    from tensorlint.analysis import Project  # LibCST and the rules load with the first document
    from tensorlint.engine import lint_source

    try:
        # A fresh Project: the other files of the workspace may have changed since the last edit.
        findings = lint_source(source, to_fs_path(uri) or uri, codes=_codes(uri), project=Project())
        return [f for f in findings if f.code]
    except Exception as error:
        server.window_log_message(types.LogMessageParams(types.MessageType.Error, f"tensorlint: {error!r}"))
        return []


def _position(codec: PositionCodec, lines: Sequence[str], location: Location) -> types.Position:
    """A finding's location (1-based, columns in characters) in the negotiated encoding's units."""
    line = lines[location.row - 1] if location.row <= len(lines) else ""
    return types.Position(location.row - 1, codec.client_num_units(line[: location.column - 1]))


def _range(codec: PositionCodec, lines: Sequence[str], start: Location, end: Location) -> types.Range:
    return types.Range(_position(codec, lines, start), _position(codec, lines, end))


def _diagnostic(finding: Finding, codec: PositionCodec, lines: Sequence[str]) -> types.Diagnostic:
    from tensorlint.rules import rule_by_code

    rule = rule_by_code(finding.code or "")
    fix = finding.fix
    data: dict[str, Any] = {"code": finding.code, "row": finding.location.row}
    if fix is not None:
        data["fix"] = {  # in characters: converted when the action is asked for, with the text of then
            "message": fix.message,
            "safe": fix.applicability is Applicability.SAFE,
            "edits": [
                [e.location.row, e.location.column, e.end_location.row, e.end_location.column, e.content]
                for e in fix.edits
            ],
        }
    return types.Diagnostic(
        range=_range(codec, lines, finding.location, finding.end_location),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url()) if rule else None,
        source="tensorlint",
        data=data,
    )


def publish(uri: str) -> None:
    document = server.workspace.get_text_document(uri)
    source = document.source
    lines = split_lines(source)
    codec = document.position_codec
    diagnostics = [_diagnostic(f, codec, lines) for f in _findings(uri, source)]
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version)
    )


@server.feature(types.INITIALIZE)
def initialize(params: types.InitializeParams) -> None:
    server.unsafe_fixes = bool(unsafe_fixes_setting(params.initialization_options))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
    setting = unsafe_fixes_setting(params.settings)
    if setting is not None:
        server.unsafe_fixes = setting


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: types.DidOpenTextDocumentParams) -> None:
    publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(params: types.DidSaveTextDocumentParams) -> None:
    publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    previous = server.pending.pop(uri, None)
    if previous is not None:
        previous.cancel()

    async def later() -> None:
        await asyncio.sleep(DEBOUNCE_SECONDS)
        server.pending.pop(uri, None)
        publish(uri)

    server.pending[uri] = asyncio.ensure_future(later())


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(params: types.DidCloseTextDocumentParams) -> None:
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = server.workspace.get_text_document(uri)
    source = document.source
    wanted = [str(getattr(kind, "value", kind)) for kind in params.context.only or []]
    actions: list[types.CodeAction] = []
    if not wanted or any(k.startswith(types.CodeActionKind.QuickFix.value) for k in wanted):
        ours = [d for d in params.context.diagnostics if d.source == "tensorlint" and _data(d)]
        actions += _fix_actions(uri, source, document.position_codec, ours)
        actions += _disable_actions(uri, source, ours)
    if not wanted or any(FIX_ALL.startswith(k) for k in wanted):
        from tensorlint.fixes import fix_source

        fixed = fix_source(source, to_fs_path(uri) or uri, codes=_codes(uri), unsafe=server.unsafe_fixes)
        if fixed.fixed and fixed.source != source:
            actions.append(
                types.CodeAction(
                    title="tensorlint: Fix all auto-fixable problems",
                    kind=FIX_ALL,
                    edit=_whole_document(uri, source, fixed.source, document.position_codec),
                )
            )
    return actions


def _fix_actions(
    uri: str, source: str, codec: PositionCodec, diagnostics: Sequence[types.Diagnostic]
) -> list[types.CodeAction]:
    """Each finding's fix as a quick fix; findings that share one fix (two in a loop that one
    `with torch.no_grad():` fixes) share its action."""
    lines = split_lines(source)
    actions: dict[tuple[object, ...], types.CodeAction] = {}
    for diagnostic in diagnostics:
        data = _data(diagnostic)
        fix = data.get("fix")
        if not fix:
            continue
        key = (data.get("code"), fix["message"], *map(tuple, fix["edits"]))
        if key in actions:
            actions[key].diagnostics = [*(actions[key].diagnostics or []), diagnostic]
            continue
        edits = [
            types.TextEdit(_range(codec, lines, Location(r1, c1), Location(r2, c2)), content)
            for r1, c1, r2, c2, content in fix["edits"]
        ]
        actions[key] = types.CodeAction(
            title=f"tensorlint ({data.get('code')}): {fix['message']}",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=True,
            edit=types.WorkspaceEdit(changes={uri: edits}),
        )
    return list(actions.values())


def _disable_actions(uri: str, source: str, diagnostics: Sequence[types.Diagnostic]) -> list[types.CodeAction]:
    """One "Disable for this line" per line that gets a `# noqa`, naming every code it silences.

    The comment goes where --add-noqa puts it: the statement's last line, merged with its noqa.
    """
    groups: dict[tuple[int, ...], list[tuple[str, int, types.Diagnostic]]] = {}
    for diagnostic in diagnostics:
        data = _data(diagnostic)
        code = data.get("code")
        if not code:
            continue
        row = int(data.get("row", diagnostic.range.start.line + 1))
        changed = tuple(edit.range.start.line for edit in _noqa_edits(source, [(code, row)]))
        if changed:
            groups.setdefault(changed, []).append((code, row, diagnostic))
    actions = []
    for members in groups.values():
        codes = sorted({code for code, _, _ in members})
        actions.append(
            types.CodeAction(
                title=f"tensorlint ({', '.join(codes)}): Disable for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic for _, _, diagnostic in members],
                edit=types.WorkspaceEdit(changes={uri: _noqa_edits(source, [(c, r) for c, r, _ in members])}),
            )
        )
    return actions


def _data(diagnostic: types.Diagnostic) -> dict[str, Any]:
    """What `_diagnostic` put in a diagnostic for its actions (the client sends it back)."""
    return diagnostic.data if isinstance(diagnostic.data, dict) else {}


def _noqa_edits(source: str, suppressed: Sequence[tuple[str, int]]) -> list[types.TextEdit]:
    """Whole-line edits that add `# noqa` for each (code, row): a line's start is the same in any encoding."""
    findings = [Finding(code, "", "", Location(row, 1), Location(row, 1)) for code, row in suppressed]
    after, _ = add_noqa_to_source(source, findings)
    before_lines, after_lines = split_lines(source, keepends=True), split_lines(after, keepends=True)
    return [
        types.TextEdit(types.Range(types.Position(i, 0), types.Position(i + 1, 0)), new)
        for i, (old, new) in enumerate(zip(before_lines, after_lines, strict=True))
        if old != new
    ]


def _whole_document(uri: str, before: str, after: str, codec: PositionCodec) -> types.WorkspaceEdit:
    lines = split_lines(before, keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):  # no line after the last: end at its last character
        end = types.Position(len(lines) - 1, codec.client_num_units(lines[-1]))
    else:
        end = types.Position(len(lines), 0)
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(types.Range(types.Position(0, 0), end), after)]})


def main() -> int:
    server.start_io()
    return 0
