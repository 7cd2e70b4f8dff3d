"""Summaries cross module boundaries where imports resolve to the project's own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensorlint.analysis.project import Project
from tensorlint.engine import lint_file, lint_source
from tests.helpers import FIXTURES

HELPERS = """\
class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


class FloatMeter:
    def __init__(self):
        self.sum = 0.0

    def update(self, val, n=1):
        self.sum += float(val) * n


def record(history, value):
    history.append(value)
"""

TRAIN = """\
import torch
from torch import nn

from {module} import AverageMeter, FloatMeter, record


def train(model: nn.Module, loader, optimizer, criterion):
    meter, floats, history = AverageMeter(), FloatMeter(), []
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss, x.size(0))
        floats.update(loss)
        record(history, loss)
        meter.update(loss.item())
    return meter.sum
"""


def _project(tmp_path: Path, module: str, helpers_at: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / helpers_at).write_text(HELPERS, encoding="utf-8")
    train = package / "train.py"
    train.write_text(TRAIN.format(module=module), encoding="utf-8")
    return train


def _package(tmp_path: Path, modules: dict[str, str]) -> dict[str, Path]:
    """A project (a root marker) with a package `pkg` of these modules; their paths by name."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    for name, text in modules.items():
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    return {name: tmp_path / "pkg" / name for name in modules}


def _found(path: Path) -> list[tuple[int, str, str]]:
    return [(f.location.row, f.code or "", f.message) for f in lint_file(path)]


def _found_afresh(path: Path) -> list[tuple[int, str, str]]:
    """As `_found`, with the project read anew (a run reads it once: this test changes it)."""
    found = lint_source(path.read_text(encoding="utf-8"), str(path), project=Project())
    return [(f.location.row, f.code or "", f.message) for f in found]


def test_relative_import_of_a_helper_class_and_function(tmp_path: Path) -> None:
    found = _found(_project(tmp_path, ".utils", "pkg/utils.py"))
    assert [(row, code) for row, code, _ in found] == [(14, "TL004"), (16, "TL004")]
    assert "`AverageMeter.update` adds it to `self.sum`" in found[0][2]
    assert "`record` runs `history.append(loss)`" in found[1][2]


def test_absolute_import_from_the_project_root(tmp_path: Path) -> None:
    found = _found(_project(tmp_path, "common", "common.py"))
    assert [(row, code) for row, code, _ in found] == [(14, "TL004"), (16, "TL004")]


def test_an_import_resolves_to_a_file_by_its_exact_name(tmp_path: Path) -> None:
    # Python imports `Common` from `Common.py` only, also where the file system ignores case;
    # a folder of the same name without `__init__.py` holds no module either.
    assert _found(_project(tmp_path, "Common", "common.py")) == []
    (tmp_path / "Common").mkdir()
    assert _found_afresh(tmp_path / "pkg" / "train.py") == []
    (tmp_path / "Common" / "__init__.py").write_text(HELPERS, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(tmp_path / "pkg" / "train.py")] == [
        (14, "TL004"),
        (16, "TL004"),
    ]


def test_a_package_that_re_exports_the_helpers_is_followed_to_their_module(tmp_path: Path) -> None:
    # `from meters import AverageMeter` where meters/__init__.py only re-exports it, by name and by `*`.
    train = _project(tmp_path, "meters", "unused.py")
    package = tmp_path / "meters"
    package.mkdir()
    (package / "__init__.py").write_text("from .average import AverageMeter, FloatMeter\nfrom .history import *\n")
    (package / "average.py").write_text(HELPERS.split("def record")[0], encoding="utf-8")
    (package / "history.py").write_text("def record" + HELPERS.split("def record")[1], encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == [(14, "TL004"), (16, "TL004")]


def test_names_a_star_import_binds_resolve_in_that_module(tmp_path: Path) -> None:
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    train.write_text(train.read_text(encoding="utf-8").replace("import AverageMeter, FloatMeter, record", "import *"))
    assert [(row, code) for row, code, _ in _found(train)] == [(14, "TL004"), (16, "TL004")]


# TRAIN with its helpers reached through the module an import binds
MODULE_QUALIFIED = (
    TRAIN.replace("from {module} import AverageMeter, FloatMeter, record", "{imports}")
    .replace("AverageMeter(), FloatMeter()", "{prefix}AverageMeter(), {prefix}FloatMeter()")
    .replace("record(history", "{prefix}record(history")
)


@pytest.mark.parametrize(
    ("imports", "prefix"),
    [
        ("from pkg import utils", "utils."),
        ("from . import utils as helpers", "helpers."),
        ("import pkg.utils", "pkg.utils."),
        ("import pkg.utils as U", "U."),
    ],
)
def test_names_reached_through_an_imported_module(tmp_path: Path, imports: str, prefix: str) -> None:
    """`utils.AverageMeter()` and `utils.record(...)`: the class and the function of the module
    that an import binds, as if imported by name."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    train.write_text(MODULE_QUALIFIED.format(imports=imports, prefix=prefix), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == [(14, "TL004"), (16, "TL004")]


def test_a_module_of_the_standard_library_or_torch_is_not_looked_for_in_the_project(tmp_path: Path) -> None:
    # A project file named like a module of the standard library is not what `import json` means.
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "json.py").write_text(HELPERS, encoding="utf-8")
    train.write_text(MODULE_QUALIFIED.format(imports="import json", prefix="json."), encoding="utf-8")
    assert _found(train) == []


STEPS = """\
def train_step(model, batch, criterion, optimizer):
    x, y = batch
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"loss": loss, "n": x.size(0)}
"""

STEPPING_LOOP = """\
from pkg import steps


def fit(model, loader, criterion, optimizer):
    history = []
    for batch in loader:
        metrics = steps.train_step(model, batch, criterion, optimizer)
        history.append(metrics["loss"])
        history.append(metrics["loss"].item())
    return history
"""


def test_a_training_step_of_another_module_makes_the_loop_a_training_loop(tmp_path: Path) -> None:
    """The step backpropagates in `steps.py`: the message says so, not that nothing frees the
    activations."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "steps.py").write_text(STEPS, encoding="utf-8")
    train.write_text(STEPPING_LOOP, encoding="utf-8")
    [(row, code, message)] = _found(train)
    assert (row, code) == (8, "TL004")
    assert "after `backward()` the activations are freed" in message


BASE_TRAINER = """\
class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.history = []
        self.losses = []

    def record(self, loss):
        self.history.append(loss)

    def record_value(self, loss):
        self.losses.append(loss.item())

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
"""

SUBCLASS = """\
{imports}


class Trainer({base}):
    def fit(self, loader, criterion):
        for x, y in loader:
            loss = criterion(self.model(x), y)
            self.step(loss)
            self.record(loss)
            self.record_value(loss)
"""


@pytest.mark.parametrize(
    ("imports", "base"),
    [
        ("from pkg.base import BaseTrainer", "BaseTrainer"),
        ("from .base import BaseTrainer", "BaseTrainer"),
        ("from pkg import base", "base.BaseTrainer"),
    ],
)
def test_methods_inherited_from_a_base_class_of_another_module(tmp_path: Path, imports: str, base: str) -> None:
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "base.py").write_text(BASE_TRAINER, encoding="utf-8")
    train.write_text(SUBCLASS.format(imports=imports, base=base), encoding="utf-8")
    found = _found(train)
    assert [(row, code) for row, code, _ in found] == [(9, "TL004")]
    assert "`BaseTrainer.record` appends it to `self.history`" in found[0][2]


STAR_MODEL = """\
import torch.nn as nn
from torch.autograd import Variable


class Encoder(nn.Module):
    def forward(self, x):
        return x
"""

STAR_TRAIN = """\
import torch
from model import *


def train(net, loader, epochs):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            docs = []
            for sample in x:
                sentences = []
                for vector in sample:
                    sentences.append({wrapped}(vector))
                docs.append(pack_sequence(sentences))
            loss = criterion(net(docs), Variable(y))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


@pytest.mark.parametrize(("wrapped", "expected"), [("Variable", []), ("Encoder()", [(14, "TL004")])])
def test_a_star_import_binds_what_the_module_imports_from_torch(
    tmp_path: Path, wrapped: str, expected: list[tuple[int, str]]
) -> None:
    """`Variable` from `from model import *` is torch's (model.py imports it from torch.autograd):
    it wraps a data tensor and records nothing. A network the module defines still runs one."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "model.py").write_text(STAR_MODEL, encoding="utf-8")
    train = tmp_path / "train.py"
    train.write_text(STAR_TRAIN.format(wrapped=wrapped), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == expected


DECODER_LOOP = """\
from torch.nn.utils.rnn import pack_padded_sequence

from .utils import AverageMeter


def train_epoch(loader, decoder, criterion, optimizer):
    words = AverageMeter()
    for features, captions, caption_lengths in loader:
        scores, targets, decode_lengths, order = decoder(features, captions, caption_lengths)
        scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
        loss = criterion(scores, pack_padded_sequence(targets, decode_lengths, batch_first=True).data)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        words.update(loss.item(), sum(decode_lengths))
        words.update(loss.item(), sum(order))
    return words.sum
"""


def test_lengths_a_model_returns_beside_its_outputs_are_ints(tmp_path: Path) -> None:
    # The meter adds `n` to `self.count`: the decode lengths (a Python list beside the scores)
    # carry no graph; an element not named for a count still may.
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    train.write_text(DECODER_LOOP, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == [(16, "TL004")]


def test_an_import_that_resolves_to_nothing_is_silence(tmp_path: Path) -> None:
    assert _found(_project(tmp_path, "somewhere_else", "unused.py")) == []


def test_the_cache_forgets_a_file_when_a_module_it_imports_changes(tmp_path: Path) -> None:
    import subprocess
    import sys

    train = _project(tmp_path, ".utils", "pkg/utils.py")
    command = [sys.executable, "-m", "tensorlint", "-q", "--exit-zero", "--cache-dir", str(tmp_path / "cache"), "pkg"]

    def rows() -> list[str]:
        out = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        return [line.split(": ")[0] for line in out.splitlines()]

    assert rows() == ["pkg/train.py:14:9", "pkg/train.py:16:9"]
    assert rows() == ["pkg/train.py:14:9", "pkg/train.py:16:9"]  # from the cache
    [store] = (tmp_path / "cache").glob("results-*.json")
    entry = json.loads(store.read_text(encoding="utf-8"))[str(train.absolute())]
    # What invalidates it: the module its import resolves to, and the project's folder, whose
    # modules were read for the callers of `train` (a module added there may call it).
    assert [Path(dependency).name for dependency, _ in entry[2]] == [tmp_path.name, "utils.py"]
    helpers = tmp_path / "pkg" / "utils.py"
    helpers.write_text(helpers.read_text(encoding="utf-8").replace("self.sum += val * n", "self.sum += float(val) * n"))
    assert rows() == ["pkg/train.py:16:9"]
    assert train.exists()


def test_a_closure_returned_by_another_module_is_not_reported_at_a_node_of_that_module(tmp_path: Path) -> None:
    # The closure's node lives in helper.py's tree: a finding in main.py cannot point at it,
    # and looking up its position used to fail the whole file with an internal error.
    (tmp_path / "helper.py").write_text(
        "import torch\n\n\ndef checkpoint(t):\n    saved = t.clone()\n\n"
        "    def restore():\n        t.copy_(saved)\n\n    return restore\n"
    )
    main = tmp_path / "main.py"
    main.write_text(
        "import torch\nfrom torch import nn\n\nfrom helper import checkpoint\n\n\n"
        "class Tracer(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.weight = nn.Parameter(torch.zeros(3))\n        self.restore = checkpoint(torch.zeros(3))\n"
    )
    assert lint_file(main) == []
    assert [f.code for f in lint_file(tmp_path / "helper.py")] == []


def test_a_callable_loss_object_of_another_module_gives_each_returned_value_its_own_graph(tmp_path: Path) -> None:
    # YOLO's `loss, loss_items = compute_loss(pred, targets)`: the instance's `__call__` returns the
    # loss with its graph and the detached items; a running mean of the items keeps no graph.
    (tmp_path / "losses.py").write_text(
        "import torch\n\n\nclass ComputeLoss:\n    def __init__(self, model):\n        self.model = model\n\n"
        "    def __call__(self, pred, targets):\n        lbox = (pred - targets).pow(2).mean()\n"
        "        return lbox * 4, torch.stack((lbox, lbox)).detach()\n"
    )
    main = tmp_path / "train.py"
    main.write_text(
        "import torch\n\nfrom losses import ComputeLoss\n\n\n"
        "def train(model, loader, optimizer):\n    compute_loss = ComputeLoss(model)\n    mloss = torch.zeros(2)\n"
        "    mtotal = torch.zeros(1)\n    for i, (imgs, targets) in enumerate(loader):\n"
        "        loss, loss_items = compute_loss(model(imgs), targets)\n        loss.backward()\n        optimizer.step()\n"
        "        mloss = (mloss * i + loss_items) / (i + 1)\n        mtotal = (mtotal * i + loss) / (i + 1)\n"
    )
    assert [(f.location.row, f.code) for f in lint_file(main)] == [(15, "TL004")]


def test_a_module_checked_after_a_file_that_imports_it_reuses_its_tree_with_the_same_findings(tmp_path: Path) -> None:
    from tensorlint.analysis.project import Project
    from tensorlint.engine import lint_source

    train = _project(tmp_path, ".utils", "pkg/utils.py")
    helpers = tmp_path / "pkg" / "utils.py"
    helpers.write_text(
        HELPERS + "\n\ndef collect(xs, loader, model):\n    for x in loader:\n        xs.append(model(x))\n"
    )
    text = helpers.read_text(encoding="utf-8")
    project = Project()
    lint_source(train.read_text(encoding="utf-8"), str(train), project=project)
    tree = project.parsed(helpers, text)
    assert tree is not None and tree.code == text  # parsed once, for the import
    assert project.parsed(helpers, text + "\n") is None  # another text (the file changed): parsed again
    shared = lint_source(text, str(helpers), project=project)
    assert shared == lint_source(text, str(helpers), project=Project())
    assert [f.code for f in shared] == ["TL004"]


@pytest.mark.parametrize(("base", "expected"), [("nn.Module", [(9, "TL004")]), ("object", [])])
def test_a_parameter_annotated_with_a_class_whose_base_module_is_imported_holds_a_network(
    tmp_path: Path, base: str, expected: list[tuple[int, str]]
) -> None:
    # `model: Wrapper`, where `Wrapper(Loadable)` and `Loadable(nn.Module)` live in two further
    # modules: calling it runs a network (an evaluation loop without no_grad keeps each graph);
    # with a plain base it is some other callable, and nothing is known of what it returns.
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "base.py").write_text(f"from torch import nn\n\n\nclass Loadable({base}):\n    pass\n")
    (tmp_path / "wrapper.py").write_text(
        "from base import Loadable\n\n\nclass Wrapper(Loadable):\n    def load(self, path):\n        pass\n"
    )
    main = tmp_path / "evaluate.py"
    main.write_text(
        "import torch\n\nfrom wrapper import Wrapper\n\n\n"
        "def evaluate(runner: Wrapper, loader):\n    scores = []\n    for x in loader:\n"
        "        scores.append(runner(x))\n    return scores\n"
    )
    assert [(f.location.row, f.code) for f in lint_file(main)] == expected


@pytest.mark.parametrize(("forward", "expected"), [("self.update(*args)", [(8, "TL004")]), (None, [])])
def test_a_metric_whose_base_class_of_another_module_updates_under_no_grad_keeps_no_history(
    tmp_path: Path, forward: str | None, expected: list[tuple[int, str]]
) -> None:
    # Lightning's metrics before torchmetrics: the base's `forward` (in `metric.py`) runs the
    # subclass's `update` under `no_grad`, so the totals kept across batches carry no graph.
    called = forward or "with torch.no_grad():\n            self.update(*args)"
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "metric.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Metric(nn.Module):\n"
        f"    def forward(self, *args):\n        {called}\n        return self.compute()\n"
    )
    main = tmp_path / "mse.py"
    main.write_text(
        "import torch\n\nfrom metric import Metric\n\n\nclass MSE(Metric):\n"
        "    def update(self, preds: torch.Tensor, target: torch.Tensor):\n"
        "        self.total += torch.sum((preds - target) ** 2)\n"
    )
    assert [(f.location.row, f.code) for f in lint_file(main)] == expected


@pytest.mark.parametrize(("base", "expected"), [("pl.LightningModule", []), ("object", [(12, "TL001")])])
def test_a_validation_step_of_a_lightning_module_through_another_modules_base_runs_without_grad(
    tmp_path: Path, base: str, expected: list[tuple[int, str]]
) -> None:
    # NeMo's models: `RadTTSModel(SpectrogramGenerator)`, whose base is a LightningModule in
    # another module. Lightning runs `validation_step` under no_grad: the kept outputs have no graph.
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "base.py").write_text(f"import lightning.pytorch as pl\n\n\nclass Generator({base}):\n    pass\n")
    main = tmp_path / "model.py"
    main.write_text(
        "from torch import nn\n\nfrom base import Generator\n\n\nclass TTS(Generator):\n    def __init__(self):\n"
        "        self.net = nn.Linear(4, 4)\n        self.outputs = []\n\n"
        "    def validation_step(self, batch, batch_idx):\n        self.outputs.append(self.net(batch))\n"
        "\n    def on_validation_epoch_end(self):\n        self.outputs.clear()\n"
    )
    assert [(f.location.row, f.code) for f in lint_file(main)] == expected


LOGGER = """\
from collections import defaultdict


class Logger:
    def __init__(self):
        self.stats = defaultdict(list)

    def log_stat(self, key, value, t):
        self.stats[key].append((t, value))
"""

LEARNER = """\
import torch


class Learner:
    def __init__(self, model, logger):
        self.model = model
        self.logger = logger
        self.optimiser = torch.optim.Adam(model.parameters())

    def train(self, batch, t):
        loss = self.model(batch).mean()
        self.optimiser.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
        self.optimiser.step()
        self.logger.log_stat("grad_norm", {logged}, t)
"""


def _learner(tmp_path: Path, logged: str, logger: str = LOGGER) -> Path:
    # The learner is handed its logger: no import says where `log_stat` is defined (epymarl's
    # learners and `utils/logging.py`, uoe-agents/epymarl@a40db06).
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "logging.py").write_text(logger, encoding="utf-8")
    (tmp_path / "learners").mkdir()
    learner = tmp_path / "learners" / "learner.py"
    learner.write_text(LEARNER.format(logged=logged), encoding="utf-8")
    return learner


@pytest.mark.parametrize(
    ("logged", "expected"),
    [("grad_norm", [(16, "TL001")]), ("grad_norm.item()", []), ("loss", [(16, "TL004")]), ("loss.item()", [])],
)
def test_a_method_only_one_module_of_the_project_defines_keeps_what_a_step_hands_it(
    tmp_path: Path, logged: str, expected: list[tuple[int, str]]
) -> None:
    found = _found(_learner(tmp_path, logged))
    assert [(row, code) for row, code, _ in found] == expected
    if expected == [(16, "TL001")]:
        assert "`Logger.log_stat` appends it to `self.stats`, which nothing empties" in found[0][2]


@pytest.mark.parametrize(
    "logger",
    [
        LOGGER + "\n    def flush(self):\n        self.stats.clear()\n",  # emptied: kept for a while, not the run
        LOGGER.replace("self.stats[key].append((t, value))", "self.stats[key] = value"),  # the last value only
    ],
)
def test_a_logger_that_empties_its_lists_or_keeps_the_last_value_keeps_no_device_tensor_for_the_run(
    tmp_path: Path, logger: str
) -> None:
    assert _found(_learner(tmp_path, "grad_norm", logger)) == []


def test_a_method_two_modules_define_is_not_guessed(tmp_path: Path) -> None:
    learner = _learner(tmp_path, "grad_norm")
    (tmp_path / "utils" / "tensorboard.py").write_text(LOGGER.replace("Logger", "BoardLogger"), encoding="utf-8")
    assert _found(learner) == []


def test_without_a_project_root_no_module_is_scanned_for_a_method(tmp_path: Path) -> None:
    learner = _learner(tmp_path, "grad_norm")
    (tmp_path / "pyproject.toml").unlink()  # the scan would have no end: silence
    assert _found(learner) == []


def test_a_project_too_large_to_scan_is_not_guessed_in(tmp_path: Path) -> None:
    learner = _learner(tmp_path, "grad_norm")
    many = tmp_path / "generated"
    many.mkdir()
    for index in range(2001):  # above the scan's limit of 2,000 modules: no method is guessed
        (many / f"m{index}.py").write_text("", encoding="utf-8")
    assert _found(learner) == []


REGISTRY_MIXIN = """\
class AccessMixin:
    def register_tensor(self, name, tensor):
        if not hasattr(self, "_registry"):
            self._registry = {}
        if name not in self._registry:
            self._registry[name] = []
        self._registry[name].append(tensor)
RESET
"""

ENCODER = """\
from torch import nn

from pkg.mixin import AccessMixin


class Encoder(nn.Module, AccessMixin):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        x = self.fc(x)
        self.register_tensor("encoder", x)
        return x
"""


@pytest.mark.parametrize(
    ("reset", "expected"),
    [("", [(13, "TL004")]), ("\n    def reset_registry(self):\n        self._registry.clear()\n", [])],
)
def test_a_base_class_of_another_module_that_empties_what_it_keeps(
    tmp_path: Path, reset: str, expected: list[tuple[int, str]]
) -> None:
    """A mixin's registry that a method of the mixin empties (the model's step resets it) is
    bounded, as it is when the mixin is in the same file."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "mixin.py").write_text(REGISTRY_MIXIN.replace("RESET", reset), encoding="utf-8")
    train.write_text(ENCODER, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == expected


DEFERRED = """\
class DeferredScalars:
    def __init__(self):
        self._pending = []

    def defer(self, tag, fn):
        self._pending.append((tag, fn))
"""

DEFERRING_LOOP = """\
from pkg import scalars as S


def train(model, loader, optimizer, criterion):
    deferred = S.DeferredScalars()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        deferred.defer("loss", lambda t=loss: t.item())
        deferred.defer("last", lambda: loss.item())
"""


def test_a_closure_per_batch_handed_to_a_buffer_of_another_module(tmp_path: Path) -> None:
    """Each thunk binds its batch's loss through a default: the buffer made before the loop keeps
    them all. A closure over the loop's variable reads one cell, the last loss only."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "scalars.py").write_text(DEFERRED, encoding="utf-8")
    train.write_text(DEFERRING_LOOP, encoding="utf-8")
    found = _found(train)
    assert [(row, code) for row, code, _ in found] == [(11, "TL002")]
    assert "kept by `DeferredScalars.defer` in `self._pending`" in found[0][2]


DEFERRED_LOGGER = """\
import functools


class DeferredLogger:
    def __init__(self, writer):
        self.writer = writer
        self._pending = []
        self._held = []

    def scalar(self, tag: str, value, step: int):
        self._pending.append(lambda: self.writer.add_scalar(tag, float(value), step))

    def scalars(self, values: dict, step: int):
        for k, v in values.items():
            self.scalar(k, v, step)

    def keep(self, value):
        self._held.append(functools.partial(print, value))

    def flush(self):
        for fn in self._pending:
            fn()
        self._pending.clear()
"""

DEFERRED_LOGGING_LOOP = """\
from pkg.deferred import DeferredLogger


def train(model, loader, optimizer, criterion, writer):
    logger = DeferredLogger(writer)
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.scalars({"loss": loss}, step)
        logger.scalar("lr", 0.1, step)
        logger.scalar("loss", loss.item(), step)
        logger.scalar("loss", loss.detach(), step)
        logger.keep(loss.detach())
    logger.flush()
"""


def test_a_helper_of_another_module_keeps_a_closure_over_its_argument(tmp_path: Path) -> None:
    """`scalar` defers a lambda that reads its `value` (and `scalars` hands it each value of a
    dict): the tensor handed over is kept until the flush, at the call that hands it over, the only
    place that shows it is a tensor. Numbers keep nothing; a detached tensor is kept only until a
    flush where the list is emptied, and for good where nothing empties it (`keep`)."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "deferred.py").write_text(DEFERRED_LOGGER, encoding="utf-8")
    train.write_text(DEFERRED_LOGGING_LOOP, encoding="utf-8")
    found = _found(train)
    assert [(row, code) for row, code, _ in found] == [(11, "TL002"), (15, "TL002")]
    assert "`DeferredLogger.scalars` keeps a closure that captures the tensor passed here" in found[0][2]
    assert "until its container is emptied" in found[0][2]
    assert "for as long as the closure is kept" in found[1][2]
    assert _found(tmp_path / "pkg" / "deferred.py") == []


TRANSFORMS = """\
import torch


def _spectrogram(wave, n_fft):
    window = torch.hann_window(n_fft)
    if torch.cuda.is_available():
        wave, window = wave.cuda(), window.cuda()
    return torch.stft(wave, n_fft, window=window, return_complex=True).abs()


def log_mel(wave, n_fft=400):
    return torch.log(_spectrogram(wave, n_fft) + 1e-6)


def normalise(feats):
    print("normalising on the CPU; cuda comes later")
    return (feats - feats.mean()) / feats.std()
"""

SPEECH_DATASET = """\
from torch.utils.data import Dataset

from . import transforms


class SpeechDataset(Dataset):
    def __init__(self, waves):
        self.waves = waves

    def __len__(self):
        return len(self.waves)

    def __getitem__(self, index):
        feats = transforms.log_mel(self.waves[index])
        return transforms.normalise(feats)
"""


def test_cuda_work_in_a_function_of_another_module_that_worker_code_calls(tmp_path: Path) -> None:
    """Only the dataset's module shows that workers run `log_mel`: reported at its call there,
    naming the CUDA call it reaches; `normalise` stays on the CPU (a word in a string is no device)."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "transforms.py").write_text(TRANSFORMS, encoding="utf-8")
    train.write_text(SPEECH_DATASET, encoding="utf-8")
    found = _found(train)
    assert [(row, code) for row, code, _ in found] == [(14, "TL003")]
    assert "`log_mel` (`wave.cuda()` in transforms.py)" in found[0][2]


def test_a_call_quoted_over_several_lines_reads_as_one_in_the_message(tmp_path: Path) -> None:
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "base.py").write_text(BASE_TRAINER, encoding="utf-8")
    subclass = SUBCLASS.format(imports="from .base import BaseTrainer", base="BaseTrainer")
    train.write_text(subclass.replace("self.record(loss)", "self.record(\n                loss,\n            )"))
    [(row, code, message)] = _found(train)
    assert (row, code) == (9, "TL004")
    assert message.startswith("`self.record( loss, )` keeps autograd history") and "\n" not in message


STORE = """\
OUTPUTS = []


def save(out):
    OUTPUTS.append(out)
"""

REGISTERING = """\
from torch import nn

from pkg import store


def attach(model: nn.Module):
    model.fc.register_forward_hook(lambda m, i, o: store.save(o))
"""


def test_a_hook_handing_its_output_to_a_list_of_another_module(tmp_path: Path) -> None:
    """The list gains the output on every forward: detached, it still would, so the message does
    not offer `.detach()` as the cure."""
    train = _project(tmp_path, ".utils", "pkg/utils.py")
    (tmp_path / "pkg" / "store.py").write_text(STORE, encoding="utf-8")
    train.write_text(REGISTERING, encoding="utf-8")
    [(row, code, message)] = _found(train)
    assert (row, code) == (7, "TL004")
    assert "`save` appends it to `OUTPUTS`" in message
    assert message.endswith("pass `.item()`, or empty it each step (`.detach()` drops the graph, not the tensor)")


REASONING_UNIT = """\
import torch
from torch import nn


class ReasoningUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 16)
        self.history = []

    def forward(self, x, h):
        h = self.cell(x, h)
        self.history.append(h.detach().cpu())
        return h


class Recorder(nn.Module):
    def forward(self, x, h):
        return h
"""

REASONING_MODEL = """\
from torch import nn

from pkg.unit import OWNER


class Reasoner(nn.Module):
    def __init__(self):
        super().__init__()
        self.unit = OWNER()

    def forward(self, x, h):
        RESET
        for _ in range(4):
            h = self.unit(x, h)
        return h
"""


@pytest.mark.parametrize(
    ("owner", "reset", "expected"),
    [
        ("ReasoningUnit", "self.unit.history = []", []),
        ("ReasoningUnit", "self.unit.history.clear()", []),
        ("ReasoningUnit", "self.unit.states = []", [(13, "TL001")]),  # another attribute
        ("Recorder", "self.unit.history = []", [(13, "TL001")]),  # a module that does not name the class
    ],
)
def test_a_list_its_owner_in_another_module_empties_on_every_call(
    tmp_path: Path, owner: str, reset: str, expected: list[tuple[int, str]]
) -> None:
    """A parent model in another module that empties its unit's list at the start of its own
    forward bounds the list, as a parent in the same module does."""
    model = REASONING_MODEL.replace("OWNER", owner).replace("RESET", reset)
    unit = _package(tmp_path, {"unit.py": REASONING_UNIT, "model.py": model})["unit.py"]
    assert [(row, code) for row, code, _ in _found(unit)] == expected


HISTORY_BUFFER = """\
import torch


class HistoryBuffer:
    def __init__(self, device):
        self.states = None
        self.device = device

    def update(self, state: torch.Tensor):
        if self.states is None:
            self.states = state.unsqueeze(0)
            return
        self.states = torch.cat([self.states, state.unsqueeze(0)])
"""

SPIN_ENV = """\
import torch

from pkg.history import HistoryBuffer


class SpinEnv:
    def __init__(self, n, device="cuda"):
        self.state = torch.zeros(n, device=device)
        self.history = HistoryBuffer(device)

    def METHOD(self):
        self.history = HistoryBuffer(self.state.device)
        return self.state
"""


@pytest.mark.parametrize(("method", "expected"), [("reset", []), ("reset_episode", []), ("load", [(13, "TL001")])])
def test_an_object_another_module_makes_afresh_in_its_reset(
    tmp_path: Path, method: str, expected: list[tuple[int, str]]
) -> None:
    """An environment in another module that makes its history buffer afresh in `reset()` bounds
    what the buffer keeps to an episode, as a maker in the same module does; made afresh in a
    method of another name, it is kept for as long as the holder says nothing."""
    history = _package(tmp_path, {"history.py": HISTORY_BUFFER, "env.py": SPIN_ENV.replace("METHOD", method)})
    assert [(row, code) for row, code, _ in _found(history["history.py"])] == expected


EVALUATION = """\
import torch


def evaluate(model, loader):
    outputs = []
    for x, _ in loader:
        outputs.append(model(x))
    return torch.cat(outputs)


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, loader):
        scores = []
        for x in loader:
            scores.append(self.model(x).softmax(-1))
        return scores
"""

EVALUATING_SCRIPT = """\
import torch

from pkg.evaluation import Predictor, evaluate


def main(model, val_loader):
    predictor = Predictor(model)
    CALLS
"""


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ("with torch.no_grad():\n        evaluate(model, val_loader)\n        predictor.predict(val_loader)", []),
        ("with torch.inference_mode():\n        return evaluate(model, val_loader), predictor.predict(val_loader)", []),
        ("evaluate(model, val_loader)\n    predictor.predict(val_loader)", [(7, "TL004"), (18, "TL004")]),
        (
            "with torch.no_grad():\n        evaluate(model, val_loader)\n    evaluate(model, val_loader)",
            [(7, "TL004"), (18, "TL004")],
        ),
        ("pass", [(7, "TL004"), (18, "TL004")]),  # no caller: judged with gradients on
        (  # gradients turned back on inside the block
            "with torch.no_grad():\n        with torch.enable_grad():\n            evaluate(model, val_loader)",
            [(7, "TL004"), (18, "TL004")],
        ),
        ("with torch.inference_mode(False):\n        evaluate(model, val_loader)", [(7, "TL004"), (18, "TL004")]),
    ],
)
def test_an_evaluation_that_every_caller_in_another_module_runs_under_no_grad(
    tmp_path: Path, calls: str, expected: list[tuple[int, str]]
) -> None:
    """A loop that keeps each batch's outputs records no graph when every call of it in the
    project runs under `no_grad`, as when its own module shows those calls."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    evaluation = tmp_path / "pkg" / "evaluation.py"
    evaluation.write_text(EVALUATION, encoding="utf-8")
    (tmp_path / "pkg" / "run.py").write_text(EVALUATING_SCRIPT.replace("CALLS", calls), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(evaluation)] == expected


def test_a_caller_beside_the_function_does_not_hide_one_elsewhere_in_the_project(tmp_path: Path) -> None:
    """A validation module beside the function runs it under `no_grad`; the training script at
    the project's root runs it with gradients on: the loop keeps every batch's graph there."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    evaluation = tmp_path / "pkg" / "evaluation.py"
    evaluation.write_text(EVALUATION, encoding="utf-8")
    quiet = "with torch.no_grad():\n        evaluate(model, val_loader)"
    (tmp_path / "pkg" / "validate.py").write_text(EVALUATING_SCRIPT.replace("CALLS", quiet), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(evaluation)] == [(18, "TL004")]
    loud = "evaluate(model, val_loader)"
    (tmp_path / "train.py").write_text(EVALUATING_SCRIPT.replace("CALLS", loud), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(evaluation)] == [(7, "TL004"), (18, "TL004")]


@pytest.mark.parametrize(
    "model",
    [
        REASONING_MODEL.replace("OWNER", "ReasoningUnit")
        .replace("RESET", "pass")
        .replace(
            "self.unit = ReasoningUnit()", "self.unit = ReasoningUnit()\n        self.unit.history = []"
        ),  # emptied once, when the model is built
        '"""ReasoningUnit keeps every state: call unit.history.clear() each step."""\n',  # words, not code
    ],
)
def test_an_emptying_that_does_not_run_per_call_does_not_bound_the_list(tmp_path: Path, model: str) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    unit = tmp_path / "pkg" / "unit.py"
    unit.write_text(REASONING_UNIT, encoding="utf-8")
    (tmp_path / "pkg" / "model.py").write_text(model, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(unit)] == [(13, "TL001")]


def test_the_cache_forgets_a_file_when_a_caller_is_added_to_the_project(tmp_path: Path) -> None:
    """Whether every caller turns gradients off is read from the project's other modules: one
    added later with gradients on brings the finding back, cache or not."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "evaluation.py").write_text(EVALUATION, encoding="utf-8")
    quiet = "with torch.no_grad():\n        evaluate(model, val_loader)\n        predictor.predict(val_loader)"
    (tmp_path / "pkg" / "run.py").write_text(EVALUATING_SCRIPT.replace("CALLS", quiet), encoding="utf-8")
    command = [sys.executable, "-m", "tensorlint", "-q", "--exit-zero", "--cache-dir", str(tmp_path / "cache")]

    def rows() -> list[str]:
        out = subprocess.run([*command, "pkg/evaluation.py"], cwd=tmp_path, capture_output=True, text=True, check=True)
        return [line.split(": ")[0] for line in out.stdout.splitlines()]

    assert rows() == []
    assert rows() == []  # from the cache
    (tmp_path / "pkg" / "train.py").write_text(EVALUATING_SCRIPT.replace("CALLS", "evaluate(model, val_loader)"))
    assert rows() == ["pkg/evaluation.py:7:9"]


SAMPLING_MODEL = """\
import torch
from torch import nn


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)

    def forward(self, pos):
        return self.net(pos)

    def predict_positions(self, loader):
        predicted = []
        for pos in loader:
            predicted.append(self(pos))
        return torch.cat(predicted)
"""

SAMPLING_CRITERION = """\
import torch


class SamplingLoss:
    def __call__(self, model, sample):
        CALL
        return out.mean()
"""

QUIET_SAMPLING = "with torch.no_grad():\n            out = model.predict_positions(sample)"
LOUD_SAMPLING = "out = model.predict_positions(sample)"


@pytest.mark.parametrize(
    ("modules", "expected"),
    [
        ({"pkg/criterion.py": QUIET_SAMPLING}, []),
        ({"pkg/criterion.py": LOUD_SAMPLING}, [(16, "TL004")]),
        # a copy of the package beside it, whose criterion runs its own copy with gradients on
        ({"pkg/criterion.py": QUIET_SAMPLING, "copy/pkg/model.py": None, "copy/pkg/criterion.py": LOUD_SAMPLING}, []),
        (
            {"pkg/criterion.py": LOUD_SAMPLING, "copy/pkg/model.py": None, "copy/pkg/criterion.py": QUIET_SAMPLING},
            [(16, "TL004")],
        ),
        # a script as near to another model's module calls a method so named with gradients on
        ({"pkg/criterion.py": QUIET_SAMPLING, "other/model.py": None, "train.py": LOUD_SAMPLING}, [(16, "TL004")]),
        # another model beside this one defines a method so named: the criterion may call either
        ({"pkg/criterion.py": QUIET_SAMPLING, "pkg/other_model.py": None}, [(16, "TL004")]),
    ],
)
def test_a_method_called_by_a_module_that_never_names_its_class(
    tmp_path: Path, modules: dict[str, str | None], expected: list[tuple[int, str]]
) -> None:
    """A criterion handed the model calls `model.predict_positions(...)` under `no_grad` without
    naming the model's class: the call is the method's when no module nearer to the criterion
    defines a method so named (None: a copy of the model there)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    model = tmp_path / "pkg" / "model.py"
    for name, call in {"pkg/model.py": None, **modules}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        text = SAMPLING_MODEL if call is None else SAMPLING_CRITERION.replace("CALL", call)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(model)] == expected


NOISE_DATASET = """\
import torch
from torch.utils.data import Dataset


class RandomNoiseDataset(Dataset):
    def __init__(self, shape):
        self.shape = shape

    def __len__(self):
        return 1024

    def __getitem__(self, idx):
        return self.gen_single_image(idx)

    def gen_single_image(self, idx):
        return torch.normal(idx, idx, self.shape, device="cuda")
"""

WORKLOAD = """\
from torch.utils.data import DataLoader

from dataset import RandomNoiseDataset


def make_loaders(shape, batch_size):
    dataset = RandomNoiseDataset(shape)
    train = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    test = DataLoader(RandomNoiseDataset(shape), batch_size, num_workers={workers})
    return train, test
"""


@pytest.mark.parametrize(
    ("workers", "expected"),
    [("0", []), ("4", [(16, "TL003")]), ("args.workers", [(16, "TL003")]), ("0, **loader_kwargs", [(16, "TL003")])],
)
def test_cuda_dataset_whose_loaders_another_module_builds(tmp_path: Path, workers: str, expected: list) -> None:
    """The dataset's module builds no loader: a library's dataset is reported, unless the modules
    of its project that build loaders over it all keep it in the main process (`num_workers`
    absent or a literal 0); a loader with workers, or a count the text does not show, keeps it."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    dataset = tmp_path / "dataset.py"
    dataset.write_text(NOISE_DATASET, encoding="utf-8")
    (tmp_path / "workload.py").write_text(WORKLOAD.format(workers=workers), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(dataset)] == expected


DATAMODULE = """\
from torch.utils.data import DataLoader

from dataset import RandomNoiseDataset


class NoiseData:
    def setup(self, shape):
        self.train_set = RandomNoiseDataset(shape)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=32, num_workers=8)

    def val_dataloader(self):
        return DataLoader(RandomNoiseDataset((4, 4)), batch_size=32)
"""


def test_cuda_dataset_also_loaded_over_an_attribute_with_workers(tmp_path: Path) -> None:
    """A loader over `self.train_set`, which the module does not construct there, may run the
    dataset with workers: the worker-free loader beside it does not settle it."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    dataset = tmp_path / "dataset.py"
    dataset.write_text(NOISE_DATASET, encoding="utf-8")
    (tmp_path / "datamodule.py").write_text(DATAMODULE, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(dataset)] == [(16, "TL003")]


def test_cuda_dataset_of_a_project_that_builds_no_loader_over_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    dataset = tmp_path / "dataset.py"
    dataset.write_text(NOISE_DATASET, encoding="utf-8")
    (tmp_path / "workload.py").write_text(WORKLOAD.replace("RandomNoiseDataset", "OtherDataset"), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(dataset)] == [(16, "TL003")]


CONFIGURED_TRAINER = """\
from torch.utils.data import DataLoader


class TrainerConfig:
    batch_size = 64
    num_workers = 0  # for DataLoader

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


class Trainer:
    def __init__(self, model, train_dataset, config):
        self.model, self.train_dataset, self.config = model, train_dataset, config

    def train(self):
        config = self.config
        loader = DataLoader(self.train_dataset, batch_size=config.batch_size, num_workers=config.num_workers)
        for x, y in loader:
            self.model(x, y)
"""

TRAINER_SCRIPT = """\
from dataset import RandomNoiseDataset
from trainer import Trainer, TrainerConfig

{setting}
config = TrainerConfig(batch_size=32, num_workers=num_workers)
Trainer(None, RandomNoiseDataset((4, 4)), config).train()
"""


@pytest.mark.parametrize(
    ("setting", "settings_file", "expected"),
    [
        ("num_workers = 0", None, []),
        ("num_workers = 4", None, [(16, "TL003")]),
        ("import sys\nnum_workers = int(sys.argv[1])", None, [(16, "TL003")]),
        (
            "import argparse\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--num_workers', type=int, default=0)\nnum_workers = parser.parse_args().num_workers",
            None,
            [(16, "TL003")],
        ),
        ("num_workers = 0", "data:\n  num_workers: 8\n", [(16, "TL003")]),
    ],
)
def test_cuda_dataset_handed_to_a_trainer_whose_setting_is_zero(
    tmp_path: Path, setting: str, settings_file: str | None, expected: list
) -> None:
    """The script makes the dataset and hands it to a trainer of another module, whose loader
    reads `num_workers` from its config (minGPT's shape): the program sets it to 0 and nothing
    else (a class default, the script's literal handed on), so the dataset runs in the main
    process. A literal above 0, a value the code computes, a command-line option or a settings
    file naming it may set it to anything: the dataset is reported."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    dataset = tmp_path / "dataset.py"
    dataset.write_text(NOISE_DATASET, encoding="utf-8")
    (tmp_path / "trainer.py").write_text(CONFIGURED_TRAINER, encoding="utf-8")
    (tmp_path / "train.py").write_text(TRAINER_SCRIPT.format(setting=setting), encoding="utf-8")
    if settings_file is not None:
        (tmp_path / "config.yaml").write_text(settings_file, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(dataset)] == expected


def test_cuda_dataset_handed_to_another_programs_trainer(tmp_path: Path) -> None:
    """Two programs in one repository, each with its own `trainer` module: the script that makes
    this dataset imports the trainer beside it, whose setting is 0; another program's script sets
    its own trainer's to 4, which says nothing about this one."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for version, setting in (("v1", "num_workers = 0"), ("v2", "num_workers = 4")):
        folder = tmp_path / version
        folder.mkdir()
        (folder / "dataset.py").write_text(NOISE_DATASET, encoding="utf-8")
        (folder / "trainer.py").write_text(CONFIGURED_TRAINER, encoding="utf-8")
        (folder / "train.py").write_text(TRAINER_SCRIPT.format(setting=setting), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(tmp_path / "v1" / "dataset.py")] == []
    assert [(row, code) for row, code, _ in _found_afresh(tmp_path / "v2" / "dataset.py")] == [(16, "TL003")]


DISTRIBUTED_LOADER = """\
import torch.utils.data as data


class DistributedDataLoader:
    def __init__(self, dataset, shuffle=False, **kwargs):
        self.sampler = data.distributed.DistributedSampler(dataset, shuffle=shuffle)
        self.loader = data.DataLoader(dataset, shuffle=False, sampler=self.sampler, **kwargs)

    def __iter__(self):
        return iter(self.loader)
"""

WRAPPED_SCRIPT = """\
from dataset import RandomNoiseDataset
from distributed_loader import DistributedDataLoader

train = DistributedDataLoader(RandomNoiseDataset((4, 4)), batch_size=32, shuffle=True{options})
"""


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("", []),
        (", num_workers=0", []),
        (", num_workers=4", [(16, "TL003")]),
        (", **loader_options", [(16, "TL003")]),
    ],
)
def test_cuda_dataset_loaded_through_a_wrapper_that_forwards_its_kwargs(
    tmp_path: Path, options: str, expected: list
) -> None:
    """The project's loader class builds its DataLoader with the `**kwargs` it is given: whether
    it has workers is what the wrapper's calls pass (FlagAI's `DistributedDataLoader`, called
    without `num_workers` in every script, keeps the dataset in the main process)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    dataset = tmp_path / "dataset.py"
    dataset.write_text(NOISE_DATASET, encoding="utf-8")
    (tmp_path / "distributed_loader.py").write_text(DISTRIBUTED_LOADER, encoding="utf-8")
    (tmp_path / "train.py").write_text(WRAPPED_SCRIPT.format(options=options), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(dataset)] == expected


EVALUATED_BY_MAIN = """\
import torch


def _sum_losses(model, loader, criterion):
    total = 0.0
    for x, y in loader:
        total += criterion(model(x), y)
    return total / len(loader)


def evaluate(model, loader, criterion):
    return _sum_losses(model, loader, criterion)


def main(model, loader, criterion):
    with torch.no_grad():
        print(evaluate(model, loader, criterion))
"""

VALIDATING_TRAINER = """\
import torch

from evaluation import evaluate


def fit(model, loaders, criterion, optimizer, epochs):
    for epoch in range(epochs):
        for x, y in loaders["train"]:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
        {validation}
"""


@pytest.mark.parametrize(
    ("validation", "expected"),
    [
        ("print(epoch, evaluate(model, loaders['val'], criterion))", [(7, "TL004")]),
        ("with torch.no_grad():\n            print(epoch, evaluate(model, loaders['val'], criterion))", []),
    ],
)
def test_helper_quiet_here_through_a_function_another_module_calls(
    tmp_path: Path, validation: str, expected: list
) -> None:
    """The loop's function is called only by `evaluate`, which this module calls under `no_grad`:
    quiet here, but the training script calls `evaluate` after each epoch with gradients on, and
    then the sum keeps every validation batch's graph; under `no_grad` there too, it keeps none."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    module = tmp_path / "evaluation.py"
    module.write_text(EVALUATED_BY_MAIN, encoding="utf-8")
    (tmp_path / "training.py").write_text(VALIDATING_TRAINER.format(validation=validation), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(module)] == expected


AUX_LOSS_MODULE = """\
_AUX_LOSS = 0
{clear}

def add_aux_loss(aux_loss):
    global _AUX_LOSS
    _AUX_LOSS = _AUX_LOSS + aux_loss


def get_aux_loss():
    return _AUX_LOSS
"""

MOE_LAYER = """\
from torch import nn

from aux import add_aux_loss


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 4)

    def forward(self, x):
        logits = self.gate(x)
        add_aux_loss(logits.softmax(-1).mean())
        return logits
"""


@pytest.mark.parametrize(
    ("clear", "expected"),
    [("\n\ndef clear_aux_loss():\n    global _AUX_LOSS\n    _AUX_LOSS = 0\n", []), ("", [(13, "TL004")])],
)
def test_global_of_another_module_that_a_function_there_resets(tmp_path: Path, clear: str, expected: list) -> None:
    """A layer's `forward` adds its auxiliary loss to a global of another module: where that
    module has a function that resets it (the model's `forward` calls `clear_aux_loss()` first),
    it is reset by whoever runs the steps, as it would be were the global in the layer's own
    module; with no reset anywhere, every call's graph stays chained to it."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "aux.py").write_text(AUX_LOSS_MODULE.format(clear=clear), encoding="utf-8")
    layer = tmp_path / "moe.py"
    layer.write_text(MOE_LAYER, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(layer)] == expected


PACKED_COLLATE = """\
import torch


def collate_packed(batch):
    tokens = torch.stack([item["tokens"] for item in batch])
    return {"tokens": tokens, "mask": torch.ones_like(tokens, device="cuda")}


def collate_padded(batch, pad=0):
    return {"tokens": torch.nn.utils.rnn.pad_sequence([item["tokens"] for item in batch], padding_value=pad)}
"""

RECIPE = """\
from functools import partial

from torchdata.stateful_dataloader import StatefulDataLoader

from library.data import collate_packed, collate_padded


def build_loader(ds, packed):
    return StatefulDataLoader(
        ds, batch_size=8, collate_fn=partial(collate_padded, pad=0) if not packed else collate_packed{workers}
    )
"""


@pytest.mark.parametrize(("workers", "expected"), [("", []), (", num_workers=4", [(6, "TL003")])])
def test_cuda_collate_that_a_recipe_imports_from_its_package(tmp_path: Path, workers: str, expected: list) -> None:
    """A library's collate function, re-exported by its package (`library/data/__init__.py`) and
    given by a recipe elsewhere in the project to a `StatefulDataLoader` (a drop-in DataLoader),
    in one branch of a conditional: that loader decides, as a DataLoader beside it would."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    package = tmp_path / "library" / "data"
    package.mkdir(parents=True)
    (tmp_path / "library" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("from ._collate import collate_packed, collate_padded\n", encoding="utf-8")
    collate = package / "_collate.py"
    collate.write_text(PACKED_COLLATE, encoding="utf-8")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "finetune.py").write_text(RECIPE.format(workers=workers), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(collate)] == expected


EQUALIZED = """\
import torch


class ScaledLR:
    @staticmethod
    def apply(module, lr_mul):
        module.register_buffer("weight_scale", torch.tensor(lr_mul))
        module.lr_mul = module.weight_scale
"""

GATHERED_LOSS = """\
import torch
import torch.distributed as dist
from torch import nn


class GatherLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        output = [torch.zeros_like(input) for _ in range(dist.get_world_size())]
        dist.all_gather(output, input)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        return torch.stack(grads).sum(0)


class InfoNCELoss(nn.Module):
    def forward(self, features_a, features_b):
        return self._forward_single_direction(features_a, features_b)

    def _forward_single_direction(self, features_a, features_b):
        gathered = torch.cat(GatherLayer.apply(features_b))
        return (features_a @ gathered.t()).logsumexp(-1).mean()
"""


def test_a_method_of_a_class_of_the_file_is_not_guessed_from_another_module(tmp_path: Path) -> None:
    """`GatherLayer.apply(x)` runs torch's `Function.apply`: not the `apply` that another module's
    class defines, which sets attributes on what it is given."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "equalized.py").write_text(EQUALIZED, encoding="utf-8")
    loss = tmp_path / "info_nce.py"
    loss.write_text(GATHERED_LOSS, encoding="utf-8")
    found = lint_source(loss.read_text(encoding="utf-8"), str(loss), codes={"TL001", "TL018"}, project=Project())
    assert [(f.location.row, f.code) for f in found] == []


SLAM_LOSSES = """\
import torch


def geodesic_loss(poses, target):
    error = (poses - target).norm(dim=-1)
    metrics = {"rot_error": error.mean().item(), "bad": (error > 0.1).float().mean().item()}
    return error.mean(), metrics
"""

SLAM_TRAIN = """\
import sys
PATH_LINE

import torch
from geom import losses


def train(model, loader, optimizer, logger):
    for images, target in loader:
        poses = model(images)
        loss, metrics = losses.geodesic_loss(poses, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.append(metrics)
"""


@pytest.mark.parametrize(
    ("path_line", "expected"),
    [
        ('sys.path.append("droid_slam")', []),
        ('sys.path.insert(0, "droid_slam")', []),
        ("", [(15, "TL004")]),  # not resolved: the metrics unpacked beside the loss are judged to carry it
    ],
)
def test_an_import_from_a_folder_the_script_adds_to_sys_path(
    tmp_path: Path, path_line: str, expected: list[tuple[int, str]]
) -> None:
    """A training script adds `droid_slam` to `sys.path` and imports `geom.losses` from there:
    the loss function's metrics are `.item()` numbers, so the list of them keeps no graph."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "droid_slam" / "geom").mkdir(parents=True)
    (tmp_path / "droid_slam" / "geom" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "droid_slam" / "geom" / "losses.py").write_text(SLAM_LOSSES, encoding="utf-8")
    train = tmp_path / "train.py"
    train.write_text(SLAM_TRAIN.replace("PATH_LINE", path_line), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found_afresh(train)] == expected


GENERATIVE_METRIC = """\
from mmengine.evaluator import BaseMetric


class GenMetric(BaseMetric):
    def __init__(self, fake_nums):
        super().__init__()
        self.fake_nums = fake_nums
        self.fake_results = []

    def evaluate(self):
        metrics = self.compute_metrics(self.fake_results)
        EMPTY
        return metrics
"""

EQUIVARIANCE = """\
from collections import defaultdict

import torch

from pkg.base import GenMetric


class Equivariance(GenMetric):
    def __init__(self, fake_nums):
        super().__init__(fake_nums)
        self.fake_results = defaultdict(list)

    @torch.no_grad()
    def process(self, data_batch, data_samples):
        for pred in data_samples:
            for key in ("eqt_int", "eqr"):
                diff = pred[key]["diff"].to(torch.float64).sum()
                self.fake_results[key] += [diff]

    def compute_metrics(self, results):
        results = dict()
        for key in ["eqt_int", "eqr"]:
            sums = torch.stack(self.fake_results[key], dim=0)
            results[key] = sums.mean().cpu().numpy()
        return results
"""


@pytest.mark.parametrize(
    ("empty", "expected"),
    [
        ("self.fake_results.clear()", []),
        ("self.fake_results = []", []),
        ("self.real_results.clear()", [(18, "TL001")]),  # another list
    ],
)
def test_a_list_that_a_base_in_another_module_empties(tmp_path: Path, empty: str, expected: list) -> None:
    """A base class of another module that empties the list once per evaluation bounds it, as a
    base of the same module does."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "base.py").write_text(GENERATIVE_METRIC.replace("EMPTY", empty), encoding="utf-8")
    metric = tmp_path / "pkg" / "equivariance.py"
    metric.write_text(EQUIVARIANCE, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(metric)] == expected


INFERENCE = """\
import torch


def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        total += torch.nn.functional.mse_loss(model(x), y)
    return total.item() / len(loader)


def evaluate_with_dropout(model, loader, samples):
    model.train()
    return sum(evaluate(model, loader) for _ in range(samples)) / samples
"""

INFERRING_SCRIPT = """\
import torch

from pkg.inference import evaluate, evaluate_with_dropout


def main(model, loader):
    CALLS
"""


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        (
            "with torch.no_grad():\n        evaluate(model, loader)\n        evaluate_with_dropout(model, loader, 8)",
            [],
        ),
        ("with torch.no_grad():\n        evaluate_with_dropout(model, loader, 8)", []),
        (  # the helper calling it runs with gradients on
            "with torch.no_grad():\n        evaluate(model, loader)\n    evaluate_with_dropout(model, loader, 8)",
            [(7, "TL004")],
        ),
        ("with torch.no_grad():\n        evaluate(model, loader)", [(7, "TL004")]),  # helper never called
    ],
)
def test_a_function_whose_callers_beside_it_run_under_no_grad_elsewhere(
    tmp_path: Path, calls: str, expected: list[tuple[int, str]]
) -> None:
    """A function that its own module calls only from a helper, which the project's other
    modules run under `no_grad` (as they run the function itself), records no graph."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    inference = tmp_path / "pkg" / "inference.py"
    inference.write_text(INFERENCE, encoding="utf-8")
    (tmp_path / "pkg" / "run.py").write_text(INFERRING_SCRIPT.replace("CALLS", calls), encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(inference)] == expected


OVERRIDING_BASE = """\
import torch
from torch import nn


class BaseSegmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.val_outputs = []

    def evaluate(self):
        score = torch.stack(self.val_outputs).mean().item()
        self.val_outputs.clear()
        return score
"""

OVERRIDING_MODEL = """\
import torch
from torch import nn

from pkg.base import BaseSegmenter


class UNetSegmenter(BaseSegmenter):
    '''Overrides `evaluate` without calling the base's: nothing ever empties `val_outputs`.'''

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.val_outputs = []

    def training_step(self, batch, optimizer):
        x, y = batch
        logits = self.net(x)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        self.val_outputs.append(loss.detach())
        return loss.item()

    def evaluate(self):
        return torch.stack(self.val_outputs).mean().item()
"""

BUILD_TIME_BASE = """\
import torch
from torch import nn


class BaseTracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.reset_state()

    def reset_state(self):
        # only called while the object is built
        self.step_losses = []
"""

BUILD_TIME_MODEL = """\
import torch
from torch import nn

from pkg.base import BaseTracker


class Regressor(BaseTracker):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.step_losses = []

    def training_step(self, batch, optimizer):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        self.step_losses.append(loss.detach())
        return loss.item()
"""


@pytest.mark.parametrize(
    ("base", "model", "expected"),
    [
        (OVERRIDING_BASE, OVERRIDING_MODEL, [(22, "TL001")]),  # overridden without `super().evaluate()`
        (
            OVERRIDING_BASE,
            OVERRIDING_MODEL.replace(
                "        return torch.stack(self.val_outputs).mean().item()", "        return super().evaluate()"
            ),
            [],
        ),
        (
            OVERRIDING_BASE,
            OVERRIDING_MODEL.replace(
                "        return torch.stack(self.val_outputs).mean().item()",
                "        return BaseSegmenter.evaluate(self)",
            ),
            [],
        ),
        (BUILD_TIME_BASE, BUILD_TIME_MODEL, [(19, "TL001")]),  # emptied only while the object is built
        (BUILD_TIME_BASE, BUILD_TIME_MODEL + "\n    def on_epoch_end(self):\n        self.reset_state()\n", []),
    ],
)
def test_a_base_elsewhere_that_does_not_empty_the_list_while_it_runs(
    tmp_path: Path, base: str, model: str, expected: list
) -> None:
    """A base's emptying counts only where it runs: not in a method the subclass overrides without
    calling it (`super().evaluate()` or `BaseSegmenter.evaluate(self)`), nor in a reset that only
    `__init__` calls (the subclass's `on_epoch_end` may call it too)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "base.py").write_text(base, encoding="utf-8")
    (tmp_path / "pkg" / "model.py").write_text(model, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(tmp_path / "pkg" / "model.py")] == expected


ADAPTING_INFERENCE = """\
import torch
import torch.nn.functional as F


def predict_all(model, loader):
    preds = []
    for x in loader:
        preds.append(model(x).softmax(-1))
    return torch.cat(preds)


def evaluate_with_tta(model, loader, optimizer):
    '''Test-time adaptation (Tent-style): needs gradients even when the caller evaluates under
    `no_grad`, so it turns them back on; the predictions are gathered with gradients on too.'''
    with torch.enable_grad():
        for x in loader:
            loss = -(model(x).softmax(-1) * model(x).log_softmax(-1)).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        preds = predict_all(model, loader)
    return preds.argmax(-1)
"""

ADAPTING_SCRIPT = """\
import torch

from pkg.inference import evaluate_with_tta


def main(model, loader, optimizer):
    with torch.no_grad():
        return evaluate_with_tta(model, loader, optimizer)
"""


def test_a_caller_that_turns_gradients_on_is_not_covered_by_its_callers_no_grad(tmp_path: Path) -> None:
    """Test-time adaptation turns gradients back on (`with torch.enable_grad():`) around the
    function's call: the script's `no_grad` around the adaptation does not reach it."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    inference = tmp_path / "pkg" / "inference.py"
    inference.write_text(ADAPTING_INFERENCE, encoding="utf-8")
    (tmp_path / "pkg" / "run.py").write_text(ADAPTING_SCRIPT, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(inference)] == [(8, "TL004")]


KV_CACHE_MODEL = (FIXTURES / "TL004" / "neg_kv_cache_of_a_part_run_under_inference_mode.py").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            "from pkg.model import Transformer\n\n\ndef generate(params, tokens):\n    return Transformer(params)(tokens, 0)\n",
            [],
        ),
        (
            "from pkg.model import TransformerBlock\n\n\ndef train(args, loader, optimizer):\n"
            "    block = TransformerBlock(0, args)\n    for x in loader:\n        block(x, 0).sum().backward()\n"
            "        optimizer.step()\n",
            [(24, "TL004"), (25, "TL004")],
        ),
    ],
)
def test_a_part_run_without_gradients_only_while_no_other_module_builds_it(
    tmp_path: Path, script: str, expected: list
) -> None:
    """llama's attention writes its cache on every call, with gradients off because the file builds
    it only inside a model whose `forward` is `@torch.inference_mode()`; a module elsewhere that
    builds one of the parts itself, and trains it, turns the writes into history again."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    model = tmp_path / "pkg" / "model.py"
    model.write_text(KV_CACHE_MODEL, encoding="utf-8")
    (tmp_path / "pkg" / "run.py").write_text(script, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(model)] == expected


SMOOTHED_CRITERION = """\
import torch.nn.functional as F
from torch import nn


class SmoothedValue:
    def __init__(self):
        self.reset()

    def reset(self):
        self.values = []

    def push(self, value):
        self.values.append(value)


class SmoothedCriterion(nn.Module):
    def __init__(self):
        super().__init__()
        self.meter = SmoothedValue()

    def forward(self, logits, target):
        loss = F.cross_entropy(logits, target)
        self.meter.push(loss)
        return loss
"""


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("from pkg.criterion import SmoothedCriterion\n\ncriterion = SmoothedCriterion()\n", [(13, "TL001")]),
        (
            "from pkg.criterion import SmoothedCriterion\n\n\ndef log(criterion):\n"
            "    print(criterion.meter.values)\n    criterion.meter.reset()\n",
            [],
        ),
    ],
)
def test_a_public_reset_bounds_a_list_only_where_some_code_calls_it(
    tmp_path: Path, script: str, expected: list
) -> None:
    """A meter's `reset()` empties its list, but only its `__init__` calls it: every push is
    kept for the run, until a module of the project calls `reset()` (a project's other module may,
    so a file with no root marker around it stays silent)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    criterion = tmp_path / "pkg" / "criterion.py"
    criterion.write_text(SMOOTHED_CRITERION, encoding="utf-8")
    (tmp_path / "pkg" / "run.py").write_text(script, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(criterion)] == expected
    (tmp_path / "pyproject.toml").unlink()
    assert [(row, code) for row, code, _ in _found_afresh(criterion)] == []


MEMORY_BANK = """\
import torch


class CrossBatchMemory:
    def __init__(self):
        self.feats = []

    def enqueue(self, feats):
        self.feats.append(feats.detach())
"""

BANK_LOOPS = """\
import torch
from bank import CrossBatchMemory


def train(model, loader, optimizer):
    memory = CrossBatchMemory()
    for images, labels in loader:
        feats = model(images.cuda())
        memory.enqueue(feats)
        loss = feats.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def extract(model, loader):
    memory = CrossBatchMemory()
    for images, labels in loader:
        memory.enqueue(model(images.cuda()))
    return memory.feats
"""


def test_a_detached_copy_kept_by_another_modules_object_through_a_training_loop(tmp_path: Path) -> None:
    """A helper of another module appends a detached copy of what it is handed to its own list:
    no graph, but as much device memory. Made before a training loop that calls it every step, the
    bank grows for the whole training (reported at the call); made for one pass over the data
    (no backward in the loop), it holds that pass's outputs, as a local list would."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "bank.py").write_text(MEMORY_BANK, encoding="utf-8")
    train = tmp_path / "train.py"
    train.write_text(BANK_LOOPS, encoding="utf-8")
    found = _found(train)
    assert [(row, code) for row, code, _ in found] == [(9, "TL001")]
    assert "appends a copy of it to `self.feats`" in found[0][2]


HISTORY = """\
from collections import defaultdict


class History:
    def __init__(self):
        self.values = defaultdict(list)

    def record(self, step, **kwargs):
        for key, value in kwargs.items():
            self.values[key].append(value)


class Tracker:
    def __init__(self):
        self.values = defaultdict(list)

    def add(self, key, value):
        self.values[key].append(value)


class FailureMonitor:
    def __init__(self):
        self.failures = []

    def on_failure(self, step, exc):
        self.failures.append(exc)


tracker = Tracker()
"""

RECORDED = """\
import torch
from history import FailureMonitor, History, tracker


def train(model, loader, optimizer):
    history, monitor = History(), FailureMonitor()
    for step, (x, y) in enumerate(loader):
        try:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        except RuntimeError as e:
            monitor.on_failure(step, e)
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats = {"loss": loss, "n": x.size(0)}
        history.record(step, **stats)
        history.record(step, loss=loss.item(), **{"n": x.size(0)})
        tracker.add("loss", loss.detach())
        tracker.add("n", x.size(0))
"""


def test_what_another_modules_objects_keep_through_kwargs_singletons_and_exceptions(tmp_path: Path) -> None:
    """Three ways a helper of another module gets what it keeps: a `**mapping` that its `**kwargs`
    takes (the values of `stats` are appended: the loss's history, every step); an object made at
    that module's top level and imported (`tracker`, whose `add` keeps a device tensor for the run);
    and a caught exception handed to a method of an object of an imported class (its traceback)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "history.py").write_text(HISTORY, encoding="utf-8")
    train = tmp_path / "train.py"
    train.write_text(RECORDED, encoding="utf-8")
    assert [(row, code) for row, code, _ in _found(train)] == [(11, "TL007"), (17, "TL004"), (19, "TL001")]


ROLLOUT_BUFFER = """\
import torch


class RolloutBuffer:
    def __init__(self):
        self.storage = []

    def add(self, obs, action, value):
        self.storage.append((obs, action, value))

    def clear(self):
        self.storage.clear()


class Agent:
    def __init__(self, policy, envs):
        self.policy, self.envs = policy.cuda(), envs
        self.buffer = RolloutBuffer()
        self.obs = torch.as_tensor(envs.reset(), device="cuda")

    @torch.no_grad()
    def collect(self, steps):
        for _ in range(steps):
            action, value = self.policy(self.obs)
            next_obs, reward, done, _ = self.envs.step(action.cpu().numpy())
            self.buffer.add(self.obs, action, value)
            self.obs = torch.as_tensor(next_obs, device="cuda")
"""

RUNNER = """\
from pkg.agent import Agent


def run(policy, envs, iterations):
    agent = Agent(policy, envs)
    for _ in range(iterations):
        agent.collect(128)
        CLEAR
"""


@pytest.mark.parametrize(
    ("clear", "expected"),
    [("agent.buffer.clear()", []), ("pass", [(9, "TL001")])],
)
def test_a_reset_that_no_code_calls(tmp_path: Path, clear: str, expected: list[tuple[int, str]]) -> None:
    """A rollout buffer's `clear()` bounds what `add` keeps when some module calls it (here the
    runner, once per iteration); where no code of the project calls it, it never runs, and the
    device tensors of every step are kept for the run."""
    modules = _package(tmp_path, {"agent.py": ROLLOUT_BUFFER, "run.py": RUNNER.replace("CLEAR", clear)})
    assert [(row, code) for row, code, _ in _found(modules["agent.py"])] == expected


LIGHTNING_COLLECTOR = """\
import lightning.pytorch as pl
import torch


class Classifier(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.eval_probs = []

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.eval_probs.append(self.net(x).softmax(-1).detach())

    def on_validation_epoch_end(self):
        probs = torch.cat(self.eval_probs)
        self.log("val/confidence", probs.max(-1).values.mean())
        self.eval_probs = []


def build(net):
    return Classifier(net)
"""


def test_a_reset_that_the_framework_calls(tmp_path: Path) -> None:
    """A LightningModule's `on_validation_epoch_end` empties what `validation_step` collects: no
    code of the project calls it, Lightning does, once per epoch."""
    modules = _package(tmp_path, {"model.py": LIGHTNING_COLLECTOR, "run.py": "from pkg.model import build\n"})
    assert _found(modules["model.py"]) == []
