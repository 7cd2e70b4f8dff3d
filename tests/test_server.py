"""The language server, end to end: started as an editor starts it, spoken to over stdio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from helpers import FIXTURES  # noqa: E402
from samples import FIXED, LEAKY, LEAKY_COLUMN, LEAKY_LINE, LEAKY_ROW  # noqa: E402

SUPPRESSED = LEAKY.replace(LEAKY_LINE, f"{LEAKY_LINE}  # noqa: TL004")
URI = Path("/tmp/tensorlint-lsp-test/leaky.py").as_uri()
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "tensorlint", "server"])
# An emoji (two UTF-16 code units, four UTF-8 bytes, one character) before the finding on its line.
EMOJI_LINE = LEAKY_LINE.replace("total +=", 'tag = "🔥"; total +=')
EMOJI = LEAKY.replace(LEAKY_LINE, EMOJI_LINE)


def _initialize(options: object = None, encodings: list[str] | None = None) -> types.InitializeParams:
    capabilities = client_capabilities("visual-studio-code")
    if encodings is not None:
        capabilities.general = types.GeneralClientCapabilities(position_encodings=encodings)
    return types.InitializeParams(capabilities=capabilities, initialization_options=options)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(_initialize({"unsafeFixes": True}))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def default_client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    """A client that sets nothing: safe fixes only, UTF-16 positions."""
    await lsp_client.initialize_session(_initialize())
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, text: str, uri: str = URI) -> list[types.Diagnostic]:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def _column(line: str, character: int, encoding: str) -> int:
    """A position's character offset (in `encoding`'s code units) as an index into the Python string."""
    if encoding == "utf-8":
        return len(line.encode("utf-8")[:character].decode("utf-8"))
    return len(line.encode("utf-16-le")[: 2 * character].decode("utf-16-le"))


def _apply(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        return offsets[position.line] + _column(lines[position.line], position.character, encoding)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


async def _actions(  # type: ignore[no-untyped-def]
    client: LanguageClient, diagnostics: list[types.Diagnostic], only: list[str] | None = None, uri: str = URI
):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
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
    fix = by_title["tensorlint (TL004): Wrap the loop in `with torch.no_grad():`"]
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


@pytest.mark.asyncio
async def test_ranges_count_utf16_code_units_as_lsp_specifies(default_client: LanguageClient) -> None:
    from tensorlint.fixes import fix_source

    diagnostics = await _open(default_client, EMOJI)
    assert [d.code for d in diagnostics] == ["TL004"]
    before = EMOJI_LINE[: EMOJI_LINE.index("total")]
    assert diagnostics[0].range.start == types.Position(LEAKY_ROW - 1, len(before.encode("utf-16-le")) // 2)
    assert diagnostics[0].range.end == types.Position(LEAKY_ROW - 1, len(EMOJI_LINE.encode("utf-16-le")) // 2)
    actions = await _actions(default_client, diagnostics, [types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if a.is_preferred)
    assert _apply(EMOJI, fix.edit.changes[URI]) == fix_source(EMOJI, "leaky.py", unsafe=True).source


@pytest.mark.asyncio
async def test_utf8_positions_when_the_client_offers_them() -> None:
    from tensorlint.fixes import fix_source

    client = await SERVER.start()
    try:
        result = await client.initialize_session(_initialize(encodings=["utf-16", "utf-8"]))
        try:
            assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
            diagnostics = await _open(client, EMOJI)
            before = EMOJI_LINE[: EMOJI_LINE.index("total")]
            assert diagnostics[0].range.start == types.Position(LEAKY_ROW - 1, len(before.encode("utf-8")))
            actions = await _actions(client, diagnostics, [types.CodeActionKind.QuickFix])
            fix = next(a for a in actions if a.is_preferred)
            fixed = fix_source(EMOJI, "leaky.py", unsafe=True).source
            assert _apply(EMOJI, fix.edit.changes[URI], "utf-8") == fixed
        finally:
            await client.shutdown_session()
    finally:
        await client.stop()


@pytest.mark.asyncio
async def test_a_broken_configuration_is_shown_once_and_the_default_rules_apply(
    default_client: LanguageClient, tmp_path: Path
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    broken = '[tool.tensorlint]\nselct = ["TL004"]\n'
    pyproject.write_text(broken, encoding="utf-8")
    first = (tmp_path / "a.py").as_uri()
    diagnostics = await _open(default_client, LEAKY, first)
    assert [d.code for d in diagnostics] == ["TL004"]
    await _actions(default_client, diagnostics, uri=first)  # code actions read the configuration again
    await _open(default_client, LEAKY, (tmp_path / "b.py").as_uri())
    assert [(m.type, "'selct' (did you mean 'select'?)" in m.message) for m in default_client.messages] == [
        (types.MessageType.Error, True)
    ]
    pyproject.write_text('[tool.tensorlint]\nselect = ["TL004"]\n', encoding="utf-8")
    await _open(default_client, LEAKY, (tmp_path / "c.py").as_uri())
    pyproject.write_text(broken, encoding="utf-8")  # the same mistake again, after a fix: shown again
    await _open(default_client, LEAKY, (tmp_path / "d.py").as_uri())
    assert len(default_client.messages) == 2


@pytest.mark.asyncio
async def test_two_findings_on_one_line_get_one_disable_action_naming_both(default_client: LanguageClient) -> None:
    from tensorlint.engine import lint_source

    source = (FIXTURES / "TL008" / "pos_nested_helper_in_forward.py").read_text(encoding="utf-8")
    diagnostics = await _open(default_client, source)
    row = next(i for i, line in enumerate(source.splitlines()) if "# expect: TL008,TL001" in line)
    on_line = [d for d in diagnostics if d.range.start.line == row]
    assert sorted(str(d.code) for d in on_line) == ["TL001", "TL008"]
    actions = await _actions(default_client, on_line, [types.CodeActionKind.QuickFix])
    disable = [a for a in actions if a.title.endswith("Disable for this line")]
    assert [a.title for a in disable] == ["tensorlint (TL001, TL008): Disable for this line"]
    assert len(disable[0].diagnostics or []) == 2
    after = _apply(source, disable[0].edit.changes[URI])
    assert after.splitlines()[row].endswith("  # noqa: TL001, TL008")
    assert [f for f in lint_source(after, "x.py") if f.location.row == row + 1] == []


@pytest.mark.asyncio
async def test_fix_all_applies_unsafe_fixes_only_once_the_user_opts_in(default_client: LanguageClient) -> None:
    diagnostics = await _open(default_client, LEAKY)
    assert not await _actions(default_client, diagnostics, ["source.fixAll.tensorlint"])
    quick_fixes = await _actions(default_client, diagnostics, [types.CodeActionKind.QuickFix])
    assert any(a.is_preferred for a in quick_fixes)  # each fix is still offered, for the user to choose
    default_client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"settings": {"unsafeFixes": True}})  # ruff's shape
    )
    actions = await _actions(default_client, diagnostics, ["source.fixAll.tensorlint"])
    assert _apply(LEAKY, actions[0].edit.changes[URI]) == FIXED


@pytest.mark.asyncio
async def test_fix_all_applies_safe_fixes_by_default(default_client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.tensorlint]\nextend-select = ["TL900"]\n', encoding="utf-8")
    uri = (tmp_path / "clean.py").as_uri()
    stale = FIXED.replace("    return total\n", "    return total  # noqa: TL004\n")
    assert stale != FIXED
    diagnostics = await _open(default_client, stale, uri)
    assert [d.code for d in diagnostics] == ["TL900"]
    actions = await _actions(default_client, diagnostics, ["source.fixAll.tensorlint"], uri=uri)
    assert _apply(stale, actions[0].edit.changes[uri]) == FIXED


def test_the_server_starts_without_the_engine_or_libcst() -> None:
    probe = (
        "import sys, tensorlint.cli, tensorlint.server\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst' or m.startswith("
        "('tensorlint.engine', 'tensorlint.analysis', 'tensorlint.rules.tl'))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
