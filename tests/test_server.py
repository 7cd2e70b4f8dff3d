"""The language server, end to end: started as an editor starts it, spoken to over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from samples import FIXED, LEAKY, LEAKY_COLUMN, LEAKY_LINE, LEAKY_ROW  # noqa: E402

SUPPRESSED = LEAKY.replace(LEAKY_LINE, f"{LEAKY_LINE}  # noqa: TL004")
URI = Path("/tmp/tensorlint-lsp-test/leaky.py").as_uri()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "tensorlint", "server"]))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), initialization_options={"unsafeFixes": True}
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, text: str) -> list[types.Diagnostic]:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=URI, language_id="python", version=1, text=text))
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[URI]


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[min(edit.range.end.line, len(lines))] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


async def _actions(client: LanguageClient, diagnostics: list[types.Diagnostic], only: list[str] | None = None):  # type: ignore[no-untyped-def]
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(URI),
            range=diagnostics[0].range if diagnostics else types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )


@pytest.mark.asyncio
async def test_diagnostics_are_published_on_open_with_the_rule_link(client: LanguageClient) -> None:
    diagnostics = await _open(client, LEAKY)
    at = [(d.code, d.range.start.line, d.range.start.character) for d in diagnostics]
    assert at == [("TL004", LEAKY_ROW - 1, LEAKY_COLUMN - 1)]  # LSP positions are 0-based
    assert diagnostics[0].source == "tensorlint"
    assert diagnostics[0].code_description is not None and "TL004" in diagnostics[0].code_description.href


@pytest.mark.asyncio
async def test_quick_fix_and_noqa_actions_produce_the_expected_text(client: LanguageClient) -> None:
    diagnostics = await _open(client, LEAKY)
    actions = await _actions(client, diagnostics, [types.CodeActionKind.QuickFix])
    by_title = {a.title: a for a in actions}
    fix = by_title["tensorlint (TL004): Accumulate `nn.functional.cross_entropy(model(x), y).item()`"]
    noqa = by_title["tensorlint (TL004): Disable for this line"]
    assert fix.is_preferred
    assert _apply(LEAKY, fix.edit.changes[URI]) == FIXED
    assert _apply(LEAKY, noqa.edit.changes[URI]) == SUPPRESSED


@pytest.mark.asyncio
async def test_fix_all_source_action(client: LanguageClient) -> None:
    diagnostics = await _open(client, LEAKY)
    actions = await _actions(client, diagnostics, ["source.fixAll.tensorlint"])
    assert [a.kind for a in actions] == ["source.fixAll.tensorlint"]
    assert _apply(LEAKY, actions[0].edit.changes[URI]) == FIXED


@pytest.mark.asyncio
async def test_half_typed_file_is_survived_and_diagnostics_come_back(client: LanguageClient) -> None:
    await _open(client, LEAKY)
    broken = LEAKY.replace("    return total\n", "    return total +\n    def (\n")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[URI]) == []
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=LEAKY)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[URI]] == ["TL004"]
