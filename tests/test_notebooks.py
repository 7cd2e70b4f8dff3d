"""Jupyter notebooks: code cells linted as one module, findings placed in cells, fixes that touch only `source`."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from helpers import FIXTURES, ROOT, cli, run_module, run_tensorlint
from tensorlint.findings import Finding, Location
from tensorlint.notebook import mask_ipython, read_notebook
from tensorlint.text import split_lines

NOTEBOOKS = FIXTURES / "notebooks"
LEAKY = NOTEBOOKS / "leaky_training.ipynb"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli(*args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def notebook_json(*cells: dict[str, object], metadata: dict[str, object] | None = None) -> dict[str, object]:
    return {"cells": list(cells), "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}


def code_cell(source: str | list[str], outputs: list[object] | None = None) -> dict[str, object]:
    lines = source if isinstance(source, list) else source.splitlines(keepends=True)
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": outputs or [], "source": lines}


def leaky_cells() -> list[dict[str, object]]:
    """Two cells; the second leaks through a name the first defines (TL004 at cell 2, row 3)."""
    return [
        code_cell("import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 2)"),
        code_cell("total = 0.0\nfor x in loader:\n    total += model(x).sum()"),
    ]


# Findings, in cells


def test_fixture_notebooks_give_exactly_the_expected_findings() -> None:
    result = run_tensorlint("--quiet", "fixtures/notebooks")
    assert result.returncode == 1, result.stderr
    found = [line.split(" ", 3)[:3] for line in result.stdout.splitlines()]
    expected = (NOTEBOOKS / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert [" ".join(parts) for parts in found] == expected
    assert result.stderr == ""


def test_names_of_earlier_cells_are_visible_to_later_cells(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "nb.ipynb").write_text(json.dumps(notebook_json(*leaky_cells()), indent=1), encoding="utf-8")
    code, out, _ = run(capsys, "-q", "nb.ipynb")
    assert code == 1
    assert out.startswith("nb.ipynb:cell 2:3:5: TL004 ")


def test_noqa_works_inside_a_cell_and_tl900_sees_it_used(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "-q", "--extend-select", "TL900", str(LEAKY))
    # cell 7 row 8 holds `val_total += ...  # noqa: TL004`: suppressed, and the comment is used
    assert ":cell 7:8:" not in out
    assert "TL900" not in out


def test_json_gives_cell_positions_and_the_line_of_the_ipynb_file(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--output-format", "json", str(LEAKY))
    records = json.loads(out)
    notebook = read_notebook(LEAKY.read_text(encoding="utf-8"))
    file_lines = split_lines(LEAKY.read_text(encoding="utf-8"))
    assert [(r["cell"], r["location"]["row"], r["location"]["column"]) for r in records] == [
        (5, 8, 5),
        (7, 7, 5),
        (8, 3, 5),
    ]
    for record in records:
        cell = next(c for c in notebook.cells if c.number == record["cell"])
        code = split_lines(cell.source)[record["location"]["row"] - 1][record["location"]["column"] - 1 :]
        at = record["file_location"]
        # The file's line, from the reported column on, is the same code as JSON writes it.
        assert file_lines[at["row"] - 1][at["column"] - 1 :].startswith(json.dumps(code)[1:10])
        assert record["noqa_row"] == cell.first_row + record["location"]["row"] - 1
        for edit in record["fix"]["edits"]:  # the fix's edits are in the cell too
            assert 1 <= edit["location"]["row"] <= edit["end_location"]["row"] <= len(split_lines(cell.source))


def test_file_lines_of_every_place_in_a_cell_with_escapes_and_both_source_shapes() -> None:
    cells = [code_cell(["x = 1\n", 'y = "\\t\u00e9\U0001f600"\n', "z"]), code_cell("a = 1\nb = 2\n")]
    cells[1]["source"] = "a = 1\nb = 2\n"  # one string, as some writers store it
    text = json.dumps(notebook_json(*cells), indent=1, ensure_ascii=True)
    notebook = read_notebook(text)
    file_lines = split_lines(text)
    for cell in notebook.cells:
        for row, line in enumerate(split_lines(cell.source, keepends=True), start=1):
            for column, char in enumerate(line, start=1):
                at = Location(cell.first_row + row - 1, column)
                where = notebook.locate(Finding("TL004", "", "nb.ipynb", at, at)).file_location
                written = json.dumps(char, ensure_ascii=True)[1:-1]
                assert file_lines[where.row - 1][where.column - 1 :].startswith(written), (cell.number, row, column)


def test_sarif_and_github_point_at_the_line_of_the_ipynb_file(capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    _, out, _ = run(capsys, "--output-format", "sarif", str(LEAKY))
    log = json.loads(out)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    [location] = log["runs"][0]["results"][0]["locations"]
    assert location["physicalLocation"]["region"]["startLine"] == 81  # `    "    train_loss += loss\n",`
    assert location["physicalLocation"]["region"]["startColumn"] == 10
    assert location["properties"] == {
        "cell": 5,
        "cellRegion": {"startLine": 8, "startColumn": 5, "endLine": 8, "endColumn": 23},
    }
    _, out, _ = run(capsys, "--output-format", "github", str(LEAKY))
    first = out.splitlines()[0]
    assert ",line=81,col=10," in first
    assert "leaky_training.ipynb:cell 5:8:5: TL004" in first


def test_full_output_shows_the_cell_line_with_the_cell_row(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--output-format", "full", str(LEAKY))
    assert "8 |     train_loss += loss\n" in out


def test_a_notebook_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(LEAKY.read_text(encoding="utf-8")))
    code, out, _ = run(capsys, "-q", "-", "--stdin-filename", "train.ipynb")
    assert code == 1
    assert out.splitlines()[0].startswith("train.ipynb:cell 5:8:5: TL004")


# IPython syntax


@pytest.mark.parametrize(
    ("cell", "python"),
    [
        ("%matplotlib inline\nimport torch\n", "pass\nimport torch\n"),
        ("!pip install torch\n", "pass\n"),
        ("for f in files:\n    !echo {f}\n", "for f in files:\n    pass\n"),
        ("files = !ls\nout, err = %sx cmd\n", "files = ...\nout, err = ...\n"),
        ("model?\n??torch.nn\nmodel.forward??\n", "pass\npass\npass\n"),
        ("%time y = \\\n    f(x)\nz = 1\n", "pass\n\nz = 1\n"),
        ("%%time\nx = f()\n", "pass\nx = f()\n"),
        ("%%bash\nnvidia-smi\nls", "\n\n\n"),
        ("%%writefile train.py\nimport torch\n", "\n\n"),
        # Python that only looks like IPython: modulo continuations, strings, comments, `!=`
        ("x = (a\n     % b)\n", "x = (a\n     % b)\n"),
        ('s = """\n%not a magic\nwhat?\n"""\n', 's = """\n%not a magic\nwhat?\n"""\n'),
        ('print("why?")  # really?\nx != y\n', 'print("why?")  # really?\nx != y\n'),
    ],
)
def test_ipython_syntax_is_masked_row_for_row(cell: str, python: str) -> None:
    masked, _ = mask_ipython(cell)
    assert masked == python
    assert len(split_lines(masked)) == len(split_lines(cell))


# Fixes


def test_fix_rewrites_only_the_fixed_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notebook = tmp_path / "leaky_training.ipynb"
    shutil.copyfile(LEAKY, notebook)
    code, _, _ = run(capsys, "--fix", "--unsafe-fixes", str(notebook))
    assert code == 0
    before = LEAKY.read_bytes()
    after = notebook.read_bytes()
    assert after == (NOTEBOOKS / "leaky_training.fixed.ipynb").read_bytes()
    # Byte for byte, only the lines that hold the fixed code changed; outputs, ids, metadata, key
    # order, indentation, non-ASCII text and the final newline did not.
    old, new = before.split(b"\n"), after.split(b"\n")
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    changed = [(old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    assert changed == [
        ([b'    "    train_loss += loss\\n",'], [b'    "    train_loss += loss.item()\\n",']),  # a training loop
        (  # evaluation loops: run under no_grad
            [
                b'    "for x, y in loader:\\n",',
                b'    "    val_losses.append(criterion(model(x), y))  # \xc3\xa9valuation\\n",',
                b'    "    val_total += criterion(model(x), y)  # noqa: TL004"',
            ],
            [
                b'    "with torch.no_grad():\\n",',
                b'    "    for x, y in loader:\\n",',
                b'    "        val_losses.append(criterion(model(x), y))  # \xc3\xa9valuation\\n",',
                b'    "        val_total += criterion(model(x), y)  # noqa: TL004"',
            ],
        ),
        (
            [b'   "source": "preds = []\\nfor x, _ in loader:\\n    preds.append(model(x))\\n"'],
            [
                b'   "source": "preds = []\\nwith torch.no_grad():\\n    for x, _ in loader:\\n        preds.append(model(x))\\n"'
            ],
        ),
    ]


@pytest.mark.parametrize(("indent", "ensure_ascii"), [(1, False), (2, True), (4, False), (None, False)])
def test_fix_keeps_the_writer_s_indent_and_escaping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], indent: int | None, ensure_ascii: bool
) -> None:
    cells = [*leaky_cells(), {"cell_type": "markdown", "metadata": {}, "source": ["Précision — à vérifier"]}]
    data = notebook_json(*cells, metadata={"kernelspec": {"language": "python", "name": "python3"}})
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n", encoding="utf-8")
    assert cli("-q", "--fix", "--unsafe-fixes", str(notebook)) == 0
    data["cells"][1]["source"][1:] = [
        "with torch.no_grad():\n",
        "    for x in loader:\n",
        "        total += model(x).sum()",
    ]  # type: ignore[index]
    assert notebook.read_text(encoding="utf-8") == json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def test_diff_prints_changed_cells_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notebook = tmp_path / "leaky_training.ipynb"
    shutil.copyfile(LEAKY, notebook)
    code, out, _ = run(capsys, "--diff", "--unsafe-fixes", str(notebook))
    assert code == 1
    assert notebook.read_bytes() == LEAKY.read_bytes()
    assert f"--- {notebook}:cell 5\n+++ {notebook}:cell 5\n" in out
    assert "-    train_loss += loss\n+    train_loss += loss.item()\n" in out


def test_add_noqa_writes_the_comment_into_the_cell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps(notebook_json(code_cell("%load_ext autoreload"), *leaky_cells()), indent=1))
    assert cli("--add-noqa", str(notebook)) == 0
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    assert cells[2]["source"][2] == "    total += model(x).sum()  # noqa: TL004"
    assert cells[0]["source"] == ["%load_ext autoreload"]
    assert cli("-q", str(notebook)) == 0


# Discovery and malformed notebooks


def test_notebooks_false_leaves_notebooks_out(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "nb.ipynb").write_text(json.dumps(notebook_json(*leaky_cells())), encoding="utf-8")
    assert run(capsys, "-q", ".")[1].startswith("nb.ipynb:cell 2:")
    (project / "pyproject.toml").write_text("[tool.tensorlint]\nnotebooks = false\n", encoding="utf-8")
    assert run(capsys, "-q", ".")[:2] == (0, "")
    assert run(capsys, "-q", "--force-exclude", "nb.ipynb")[:2] == (0, "")  # as pre-commit names it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"cells": [', "cannot read notebook: not valid JSON: Expecting value (line 1, column 12)"),
        ('{"metadata": {}, "nbformat": 4}', "cannot read notebook: not a notebook: no `cells` list"),
        ('{"worksheets": [], "nbformat": 3}', "cannot read notebook: nbformat 3 notebooks are not supported"),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1: `source` must be a string or a list of strings"),
        ("[1, 2]", "cannot read notebook: not a notebook: the JSON is not an object"),
    ],
)
def test_a_malformed_notebook_is_reported_and_the_run_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (project / "bad.ipynb").write_text(text, encoding="utf-8")
    (project / "nb.ipynb").write_text(json.dumps(notebook_json(*leaky_cells())), encoding="utf-8")
    code, out, _ = run(capsys, "-q", ".")
    assert code == 1
    first, second = out.splitlines()
    assert first.startswith("bad.ipynb:1:1: ") and message in first
    assert second.startswith("nb.ipynb:cell 2:3:5: TL004")


@pytest.mark.parametrize(
    "metadata",
    [
        {"kernelspec": {"language": "R", "name": "ir"}},
        {"language_info": {"name": "julia"}, "kernelspec": {"language": "julia"}},
    ],
)
def test_a_notebook_in_another_language_is_skipped_with_a_warning(
    project: Path, capsys: pytest.CaptureFixture[str], metadata: dict[str, object]
) -> None:
    (project / "other.ipynb").write_text(json.dumps(notebook_json(*leaky_cells(), metadata=metadata)), encoding="utf-8")
    (project / "nb.ipynb").write_text(json.dumps(notebook_json(*leaky_cells())), encoding="utf-8")
    code, out, err = run(capsys, "-q", "--fix", ".")
    assert code == 1
    assert "other.ipynb" not in out and "nb.ipynb:cell 2:3:5: TL004" in out
    assert "tensorlint: warning: other.ipynb: skipped: the kernel's language is" in err


def test_the_flake8_plugin_ignores_notebooks(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook_json(*leaky_cells()), indent=1), encoding="utf-8")
    result = run_module("flake8", "--select", "TL", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_cell_indented_as_a_whole_is_read_as_jupyter_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """IPython removes the indentation every line of a cell shares: no syntax error, and the finding's
    column is the column in the cell as written."""
    source = "    import torch\n    losses = []\n    for x in batches:\n        losses.append(torch.nn.functional.mse_loss(net(x), x))\n"
    path = tmp_path / "indented.ipynb"
    path.write_text(json.dumps(notebook_json(code_cell(source))), encoding="utf-8")
    code, out, _ = run(capsys, "--no-cache", str(path))
    assert code == 1
    assert f"{path}:cell 1:4:9: TL004 " in out
    assert "SyntaxError" not in out
