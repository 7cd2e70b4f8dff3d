"""Source text before any parsing: reading and decoding a file, and the cheap screen.

Nothing here imports LibCST: a run whose files are all cached or all screened out never
pays for it.
"""

from __future__ import annotations

import errno
import functools
import io
import os
import re
import stat
import tokenize
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

# A file can give a finding only if it names torch or Lightning, or shows what the analysis takes
# as evidence without them: hooks, `backward()`, CUDA, `forward` and per-step methods, losses and
# criteria, tensor and module annotations, networks and losses called by their names (`model(x)`,
# `self.encoder(x)`, `loss_fn(out, y)`: the word alone, in `model_name` or a docstring, makes no
# value), datasets, loaders and their callbacks. Widen it with the analysis: tests/test_screen.py
# checks that it never hides a finding.
MODEL_WORDS = frozenset(
    ["model", "net", "network", "module", "encoder", "decoder", "backbone", "generator", "discriminator",
     "teacher", "student", "policy", "critic", "actor", "classifier", "unet", "transformer"]
)  # fmt: skip  # the analysis's names for networks (analysis/values.py), here without LibCST
_SCREEN = re.compile(
    r"torch|lightning|hook|backward|cuda|forward|_step|criterion|loss\w*\(|Tensor|\bModule\b|Dataset|DataLoader"
    rf"|collate|worker_init|\.eval\(|\.(?:named_)?parameters\(|(?<![A-Za-z0-9])(?:{'|'.join(sorted(MODEL_WORDS))})\("
)
NOTEBOOK_SUFFIX = ".ipynb"  # here, not in tensorlint.notebook: finding files must not import that
# Another framework's code (MXNet, TensorFlow, JAX, Paddle) in a file that never names torch: its
# `loss`, `forward` and `backward` are not PyTorch's, and what they keep is not what rules know.
_OTHER_FRAMEWORK = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:mxnet|tensorflow|jax|paddle|mindspore|oneflow|caffe2)\b", re.MULTILINE
)
_NAMES_TORCH = re.compile(r"\btorch|lightning")  # not `pytorch` in a name or a link: `dlrm_data_pytorch`
UNUSED_NOQA_CODE = "TL900"  # the one rule that reads comments, not code: it runs on screened-out files too


_TESTS_FOLDER = "tests"
_PYTEST_NAME = re.compile(r"(?:test_\w*|\w+_test|conftest)\.py")
# What a test module shows: research code also names its evaluation scripts `*_test.py`.
_TEST_FRAMEWORK = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:pytest|unittest)\b|^[ \t]*def test_", re.MULTILINE)


def is_test_code(filename: str, source: str) -> bool:
    """A file in a `tests/` folder of its project, or one named as pytest collects it that imports
    pytest or unittest or defines a `test_` function.

    A test runs a model for a few steps and keeps what it compares on purpose: growth that
    would end a long run in out-of-memory is bounded there (on the trees of the mined fixes, all
    48 such findings in test code were false, none true).
    """
    path = Path(filename)
    if _TESTS_FOLDER in _folders_in_project(path):
        return True
    return bool(_PYTEST_NAME.fullmatch(path.name) and _TEST_FRAMEWORK.search(source))


ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# Files beside a project's modules that may set what the code reads as a setting (a YAML config, a
# launch script's `--num_workers 4`): the analysis reads their text, never parses them.
SETTINGS_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh")
# Folders inside a project's tree that hold no module of it (hidden folders neither).
_NOT_THE_PROJECTS = frozenset(["site-packages", "node_modules", "__pycache__", "build", "dist", "venv", "env"])


def walk_project(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk` over a project's tree in a fixed order, without the folders that hold none of its
    modules: what the analysis reads of the project, and what its result cache depends on."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(f for f in subfolders if not f.startswith(".") and f not in _NOT_THE_PROJECTS)
        yield folder, subfolders, sorted(files)


def _folders_in_project(path: Path) -> tuple[str, ...]:
    """The folders between the project's root and the file: as written when relative (a run from
    the root), else below the nearest folder with a root marker (an editor's absolute path, which
    may lie in a `tests/` folder of something else)."""
    if not path.is_absolute():
        return path.parts[:-1]
    return _below_root(path.parent) or ()


@functools.cache
def _below_root(folder: Path) -> tuple[str, ...] | None:
    """None when no folder above has a root marker: then no folder counts (checked, not skipped)."""
    if any((folder / marker).exists() for marker in ROOT_MARKERS):
        return ()
    if folder.parent == folder:
        return None
    above = _below_root(folder.parent)
    return None if above is None else (*above, folder.name)


def might_matter(source: str) -> bool:
    """The cheap screen, before any parsing: whether the text is torch code that some rule reads."""
    if _NAMES_TORCH.search(source):  # the fast search first; `_SCREEN` would find the same word
        return True
    return not _OTHER_FRAMEWORK.search(source) and _SCREEN.search(source) is not None


# Words a rule's findings cannot do without: the API it is about, or the statements it reads (an
# alias is imported under the name it stands for). A rule reports nothing in a text that lacks one
# of its groups of words (each group: any of its strings or patterns); a rule without words always
# runs: growth takes too many forms, and a closure may be made by another module's function that
# the file calls. So test code whose text names none of those APIs (only they run there: see
# `is_test_code`) is not parsed. tests/test_screen.py and the metamorphic tests
# check that every finding's rule is let through. Plain strings and patterns that start with a
# literal are searched fast (a pattern that starts with a class or an alternation tries every
# position): the screen reads every file.
Words = tuple[str | re.Pattern[str], ...]
_TRY = re.compile(r"try\s*:")
_HOOK_REGISTRATION = re.compile(r"register_\w*hook")
_RULE_WORDS: dict[str, tuple[Words, ...]] = {
    # What a DataLoader's workers run (the CUDA work may be in another module's function it calls)
    "TL003": (("DataLoader", "Dataset", "__getitem", "__iter__", "collate", "worker_init"),),
    "TL005": ((re.compile(r"for\s"),), (re.compile(r"del\b(?<=[\s;:]del)"),)),
    "TL006": ((_TRY,), (re.compile(r"(?i:oom|out.?of.?memory)"), "should_reduce_batch_size")),
    "TL007": ((_TRY, "exc_info", "sys.exception"),),  # (a helper a handler calls reads `sys.exc_info()`)
    "TL008": ((_HOOK_REGISTRATION,),),
    "TL009": (("functools", "lru_cache"),),
    "TL011": (("retain_graph",),),
    "TL013": (("DataLoader",),),
    "TL016": ((_HOOK_REGISTRATION,),),
    "TL017": ((re.compile(r"load\b"),),),
    "TL019": (("empty_cache",),),
}


def reportable(source: str, codes: Collection[str]) -> list[str]:
    """The codes of `codes` whose rules could report something in this text: the others need not run."""
    return list(_reportable(source, codes))


def _reportable(source: str, codes: Collection[str]) -> Iterator[str]:
    """`reportable`, lazily: whether any rule can report is answered at the first that can."""
    if not might_matter(source):
        return
    found: dict[Words, bool] = {}  # rules share words (`try:`, a hook registration): each searched once
    for code in codes:
        if code != UNUSED_NOQA_CODE and _has_words(source, code, found):
            yield code


def _has_words(source: str, code: str, found: dict[Words, bool]) -> bool:
    for words in _RULE_WORDS.get(code, ()):
        if words not in found:
            found[words] = any(w in source if isinstance(w, str) else w.search(source) for w in words)
        if not found[words]:
            return False
    return True


def needs_engine(source: str, codes: Collection[str], *, apply_noqa: bool = True) -> bool:
    """Whether linting this text can report anything; when not, its findings are none."""
    if next(_reportable(source, codes), None) is not None:
        return True  # most often at once: the rules about growth have no words
    return apply_noqa and UNUSED_NOQA_CODE in codes and "noqa" in source.lower()


def read_source(path: Path) -> str:
    """A Python file's text, decoded as Python does: BOM and PEP 263 coding cookies honoured."""
    return read_source_and_encoding(path)[0]


def read_source_and_encoding(path: Path) -> tuple[str, str]:
    """The text and the encoding to write it back in (`utf-8-sig` keeps a BOM)."""
    return decode_source(read_regular_file(path))


def decode_source(data: bytes) -> tuple[str, str]:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # A cookie naming a codec that a package registers (`# -*- coding: future_fstrings -*-`,
        # UTF-8 underneath): read the file as UTF-8, as ruff does, rather than skip it.
        if not str(error).startswith("unknown encoding"):
            raise
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            raise error from None
    return data.decode(encoding), encoding


def read_regular_file(path: Path) -> bytes:
    """A file's bytes; a FIFO, device, socket or folder raises OSError instead of blocking the run.

    The file is opened without blocking and checked through its descriptor, so that a path
    swapped for a FIFO after discovery still cannot hang the read.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(mode)})", str(path))
        return handle.read()


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, for messages."""
    kinds: dict[Callable[[int], bool], str] = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a file")


# Deep nesting: LibCST's native parser recurses once per level and crashes the process (a stack
# overflow, not an exception) past a few thousand levels, and slows quadratically long before.
MAX_BRACKET_DEPTH = 200  # CPython's own limit: deeper is a SyntaxError for Python itself
MAX_CHAIN = 1000  # operators in one expression between commas; real code stays far below
_STRING = r"""[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
_NESTING_TOKEN = re.compile(
    rf"(?P<skip>{_STRING}|#[^\n]*)|(?P<open>[(\[{{])|(?P<close>[)\]}}])|(?P<end>[,;])|(?P<newline>\n)"
    r"|(?P<operator>\b(?:and|or|not|if|lambda|await)\b|\*\*|[-+~*/%@&|^<>.])"
)


# Strings and comments, from their quote (a prefix letter changes no bracket): a pattern that
# starts with a literal, which the engine finds fast, unlike `_STRING`'s optional prefix.
_SKIPPED = re.compile(r'"""[\s\S]*?"""' r"|'''[\s\S]*?'''" r'|"(?:\\.|[^"\\\n])*"' r"|'(?:\\.|[^'\\\n])*'|#[^\n]*")
_BRACKET = re.compile(r"[^()\[\]{}]+")
_AS_PARENTHESES = str.maketrans("[{]}", "(())")
_OPERATOR_CHARACTERS = "([{-+~*/%@&|^<>."
_OPERATOR_WORD = re.compile(r"\b(?:and|or|not|if|lambda|await)\b")


def nesting_problem(source: str) -> tuple[int, str] | None:
    """The row and reason where the text is too deeply nested to parse safely: a cheap scan, strings skipped."""
    return None if _surely_shallow(source) else _scan_nesting(source)


def _surely_shallow(source: str) -> bool:
    """Whether bounds computed in C, not token by token, already rule out both problems. Depth:
    matched pairs are removed innermost first, one round per level, and every unmatched opening
    bracket may add one. Chains: no chain runs past a comma or semicolon, and each operator is a
    character at least."""
    code = _SKIPPED.sub(" ", source)
    brackets = _BRACKET.sub("", code).translate(_AS_PARENTHESES)
    rounds = 0
    while "()" in brackets and rounds <= MAX_BRACKET_DEPTH:
        brackets = brackets.replace("()", "")
        rounds += 1
    if rounds + brackets.count("(") > MAX_BRACKET_DEPTH:
        return False
    for piece in re.split("[,;]", code):
        if len(piece) > MAX_CHAIN:
            operators = sum(piece.count(c) for c in _OPERATOR_CHARACTERS) + len(_OPERATOR_WORD.findall(piece))
            if operators > MAX_CHAIN:
                return False
    return True


def _scan_nesting(source: str) -> tuple[int, str] | None:
    depth = chain = 0
    for match in _NESTING_TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "open":
            depth += 1
            chain += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
        elif kind == "end" or (kind == "newline" and depth == 0):
            chain = 0
        elif kind == "operator":
            chain += 1
        if depth > MAX_BRACKET_DEPTH or chain > MAX_CHAIN:
            row = source.count("\n", 0, match.start()) + 1
            if depth > MAX_BRACKET_DEPTH:
                return row, f"brackets nested more than {MAX_BRACKET_DEPTH} deep (Python's own limit)"
            return row, f"more than {MAX_CHAIN} operators chained in one expression"
    return None
