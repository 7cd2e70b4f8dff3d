"""The editor front-end: a language server on pygls (`tensorlint server`).

It lints the buffer's text with the same core as the CLI, publishes diagnostics on open,
save and (debounced) change, and offers code actions built from the findings: each fix as a
quick fix, "disable for this line" (`# noqa: CODE`), and `source.fixAll.tensorlint`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from tensorlint import __version__
from tensorlint.add_noqa import add_noqa_to_source
from tensorlint.analysis import Project
from tensorlint.config import ConfigError, find_pyproject, load_config
from tensorlint.engine import lint_source
from tensorlint.findings import Applicability, Finding, Location
from tensorlint.fixes import fix_source
from tensorlint.rules import rule_by_code
from tensorlint.text import split_lines

DEBOUNCE_SECONDS = 0.3
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.tensorlint"


class TensorlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tensorlint", __version__)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.unsafe_fixes = False  # initializationOptions: {"unsafeFixes": true} lets fix-all apply them


server = TensorlintServer()


def _codes(uri: str) -> frozenset[str] | None:
    """The codes the nearest pyproject.toml selects for this file; all codes when it has no path."""
    path = to_fs_path(uri)
    if path is None:
        return None
    try:
        config = load_config(find_pyproject(Path(path).parent))
    except ConfigError as error:
        server.window_log_message(types.LogMessageParams(types.MessageType.Warning, str(error)))
        return None
    return config.codes_for(Path(path))


def _findings(uri: str, source: str) -> list[Finding]:
    try:
        # A fresh Project: the other files of the workspace may have changed since the last edit.
        findings = lint_source(source, to_fs_path(uri) or uri, codes=_codes(uri), project=Project())
        return [f for f in findings if f.code]
    except Exception as error:
        server.window_log_message(types.LogMessageParams(types.MessageType.Error, f"tensorlint: {error!r}"))
        return []


def _range(finding: Finding) -> types.Range:
    return types.Range(
        types.Position(finding.location.row - 1, finding.location.column - 1),
        types.Position(finding.end_location.row - 1, finding.end_location.column - 1),
    )


def _diagnostic(finding: Finding) -> types.Diagnostic:
    rule = rule_by_code(finding.code or "")
    fix = finding.fix
    data: dict[str, Any] = {"code": finding.code, "row": finding.location.row}
    if fix is not None:
        data["fix"] = {
            "message": fix.message,
            "safe": fix.applicability is Applicability.SAFE,
            "edits": [
                [e.location.row, e.location.column, e.end_location.row, e.end_location.column, e.content]
                for e in fix.edits
            ],
        }
    return types.Diagnostic(
        range=_range(finding),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url()) if rule else None,
        source="tensorlint",
        data=data,
    )


def publish(uri: str) -> None:
    document = server.workspace.get_text_document(uri)
    diagnostics = [_diagnostic(f) for f in _findings(uri, document.source)]
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version)
    )


@server.feature(types.INITIALIZE)
def initialize(params: types.InitializeParams) -> None:
    options = params.initialization_options
    server.unsafe_fixes = bool(isinstance(options, dict) and options.get("unsafeFixes"))


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
    wanted = [str(getattr(kind, "value", kind)) for kind in params.context.only or []]
    actions: list[types.CodeAction] = []
    if not wanted or any(k.startswith(types.CodeActionKind.QuickFix.value) for k in wanted):
        for diagnostic in params.context.diagnostics:
            if diagnostic.source == "tensorlint" and isinstance(diagnostic.data, dict):
                actions.extend(_quick_fixes(uri, document.source, diagnostic))
    if not wanted or any(FIX_ALL.startswith(k) for k in wanted):
        fixed = fix_source(document.source, to_fs_path(uri) or uri, codes=_codes(uri), unsafe=server.unsafe_fixes)
        if fixed.fixed and fixed.source != document.source:
            actions.append(
                types.CodeAction(
                    title="tensorlint: Fix all auto-fixable problems",
                    kind=FIX_ALL,
                    edit=_whole_document(uri, document.source, fixed.source),
                )
            )
    return actions


def _quick_fixes(uri: str, source: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    data: dict[str, Any] = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    code = data.get("code")
    actions = []
    fix = data.get("fix")
    if fix:
        edits = [
            types.TextEdit(types.Range(types.Position(r1 - 1, c1 - 1), types.Position(r2 - 1, c2 - 1)), content)
            for r1, c1, r2, c2, content in fix["edits"]
        ]
        actions.append(
            types.CodeAction(
                title=f"tensorlint ({code}): {fix['message']}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: edits}),
            )
        )
    row = int(data.get("row", diagnostic.range.start.line + 1))
    if code:
        # The same placement as --add-noqa: the statement's last line, merged with its noqa.
        at = Location(row, 1)
        suppressed, _ = add_noqa_to_source(source, [Finding(code, "", uri, at, at)])
        before, after = split_lines(source, keepends=True), split_lines(suppressed, keepends=True)
        edits = [
            types.TextEdit(types.Range(types.Position(i, 0), types.Position(i + 1, 0)), new)
            for i, (old, new) in enumerate(zip(before, after, strict=True))
            if old != new
        ]
        if edits:
            actions.append(
                types.CodeAction(
                    title=f"tensorlint ({code}): Disable for this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                )
            )
    return actions


def _whole_document(uri: str, before: str, after: str) -> types.WorkspaceEdit:
    lines = split_lines(before, keepends=True)
    end = types.Position(len(lines), 0)
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(types.Range(types.Position(0, 0), end), after)]})


def main() -> int:
    server.start_io()
    return 0
