"""Other modules of the project: where an import resolves to a file, its functions' summaries
serve the call sites of the module being checked.

Modules are found from the importing file (relative imports from its package, absolute ones
from its folder and the folders above it, up to the project root), parsed and analysed once
per process, and never executed.
"""

from __future__ import annotations

import ast
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from tensorlint.analysis.facts import Facts
from tensorlint.analysis.names import LOADER_CLASSES, grad_mode_asked, grad_mode_set_by, resets_by_name
from tensorlint.analysis.parse import parse_module
from tensorlint.source import ROOT_MARKERS, SETTINGS_SUFFIXES, read_source, walk_project

_MAX_BYTES = 2_000_000  # a generated module this large is not a helper worth following
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)
# `tracker = Tracker()` at a module's top level: an object other modules import and call methods of.
_INSTANCE = re.compile(r"^(\w+)[ \t]*=[ \t]*[A-Z]\w*\(", re.MULTILINE)
# `from .jtnn_vae import JTNNVAE, JTNNDecoder as Decoder` or `from .utils import *` in a package's
# `__init__`: where a name it does not define comes from.
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.MULTILINE)
_MAX_RE_EXPORTS = 3  # a package re-exporting a subpackage's re-export; import cycles stop here
# An indented `def`: a method (or a nested function; a superset is enough to tell one definer).
_METHOD_DEFINITION = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
# `self.unit.history = []` (or `None`), `unit.history.clear()`, `del unit.history[:]`: an object's
# attribute emptied from outside it (an attribute of `self` itself is its class's own business).
_FOREIGN_EMPTYING = re.compile(
    r"(?<!\bself)\.(\w+)[ \t]*=[ \t]*(?:\[[ \t]*\]|\{[ \t]*\}|list\(\)|dict\(\)|None)[ \t]*(?:#.*)?$"
    r"|(?<!\bself)\.(\w+)\.clear\(\)"
    r"|\bdel[ \t]+(?!self\.\w+\[)[\w.]+\.(\w+)\[[ \t]*:[ \t]*\]",
)
# What such a line ends with, found first: the pattern above is slow to try at every position.
_EMPTYING = re.compile(r"=[ \t]*(?:\[[ \t]*\]|\{[ \t]*\}|list\(\)|dict\(\)|None)|\.clear\(\)|\[[ \t]*:[ \t]*\]")


def _emptied_attributes(text: str) -> Iterator[str]:
    """The attributes that lines ending as an emptying does may empty: each such line read once
    (a long generated line with many `=None` is not read again for each)."""
    starts = {text.rfind("\n", 0, match.start()) + 1 for match in _EMPTYING.finditer(text)}
    for start in starts:
        end = text.find("\n", start)
        for names in _FOREIGN_EMPTYING.findall(text[start : end if end >= 0 else len(text)].rstrip("\r")):
            yield "".join(names)


_MAX_SETTINGS_BYTES = 256 * 1024
_NO_GRAD_WORDS = re.compile(r"no_grad|inference_mode|set_grad_enabled")
_MAX_SCANNED_FOR_CALLS = 400
# The importer's own folder is read up to more: its modules are the file's siblings, and a folder so
# large is rare (this project's fixtures of one rule are one).
_MAX_SCANNED_FOLDER_FOR_CALLS = 1000
# `sys.path.append("droid_slam")`, `sys.path.insert(0, "./src")`: a literal folder added to the search path
_SYS_PATH_ADDITION = re.compile(r"""sys\.path\.(?:append|insert)\(\s*(?:-?\d+\s*,\s*)?(['"])([^'"\n]+)\1\s*\)""")
_CALLED_NAME = re.compile(r"(?<!def )\b([A-Za-z_]\w*)[ \t]*\(")
_LOADER_CALL = re.compile(rf"\b({'|'.join(sorted(LOADER_CLASSES))})[ \t]*\(")
# A project larger than this is not scanned for a method's definers: the scan reads every module,
# and walks every folder (a dataset kept in the project's tree can hold a million files).
_MAX_SCANNED_MODULES = 2000
_MAX_SCANNED_ENTRIES = 50_000

# How a module found here is analysed: the walk (flow.py) passes its own, so that this module,
# which it imports, never imports it back.
Analyzer = Callable[[cst.Module, Path, "Project"], Facts]


class _Scan:
    """The modules below a folder, and what a text scan of them finds, each scan made when first asked."""

    def __init__(self, folder: Path, modules: list[Path], text: Callable[[Path], str], settings: list[Path]) -> None:
        self.folder = folder
        self.modules = modules
        self.settings = settings  # the files other than Python that may set what modules read
        self._text = text
        self._indexes: dict[str, dict[str, list[Path]]] = {}

    def _index(self, kind: str, names_in: Callable[[str], Iterable[str]]) -> dict[str, list[Path]]:
        found = self._indexes.get(kind)
        if found is None:
            found = self._indexes[kind] = {}
            for path in self.modules:
                for name in set(names_in(self._text(path))):
                    found.setdefault(name, []).append(path)
        return found

    def defining(self, method: str) -> list[Path]:
        """The files that may define a method so named."""
        return self._index("methods", _METHOD_DEFINITION.findall).get(method, [])

    def emptying(self, attribute: str) -> list[Path]:
        """The files that may empty an attribute so named on an object other than `self`."""
        return self._index("emptied", _emptied_attributes).get(attribute, [])

    def calling(self, name: str) -> list[Path]:
        """The files that may call a function or method so named."""
        return self._index("called", _CALLED_NAME.findall).get(name, [])

    def building_loaders(self) -> list[Path]:
        """The files that may build a DataLoader (or a drop-in replacement)."""
        built = self._index("loaders", _LOADER_CALL.findall)
        return list(dict.fromkeys(path for loader in sorted(LOADER_CLASSES) for path in built.get(loader, [])))


@dataclass(frozen=True)
class Resolved:
    facts: Facts
    name: str  # the function or class name inside that module
    path: Path


class Project:
    """Resolves imported names to the analysed modules that define them."""

    def __init__(self, capacity_bytes: int = 8 << 20, parse: Callable[[str], cst.Module] = parse_module) -> None:
        # The most recently used modules, up to this much source text: a run over a large tree
        # must not keep every imported module's tree in memory, and a tree's memory follows its
        # text (counting modules instead kept too few small ones and too many large ones).
        self._modules: OrderedDict[Path, Facts | None] = OrderedDict()
        self._sizes: dict[Path, int] = {}
        self._texts: dict[Path, str] = {}  # the text each kept module was parsed from
        self.capacity_bytes = capacity_bytes
        self.parse = parse  # how the modules that imports resolve to are parsed
        self.loaded: set[Path] = set()  # files a result depends on (for the result cache)
        self._found: dict[tuple[Path, str], list[Path]] = {}  # (importer's folder, module name) -> candidates, resolved
        self._definitions: dict[Path, frozenset[str]] = {}  # file -> names it may define
        self._re_exports: dict[Path, list[tuple[str, str, str]]] = {}  # file -> (module, name, local name)
        self._dropped: list[Facts] = []  # modules no longer kept, to release after the file
        self._folders: dict[Path, Path] = {}  # importer -> its resolved folder
        self._path_additions: dict[Path, list[Path]] = {}  # importer -> folders it adds to `sys.path`
        self._bases: dict[Path, list[Path]] = {}  # folder -> where its absolute imports are looked for
        self._probed_files: dict[str, bool] = {}
        self._listings: dict[str, frozenset[str]] = {}  # folder -> the names in it
        self._scans: dict[Path, _Scan | None] = {}  # project root (or a folder of it) -> its text scan
        self._no_grad_calls: dict[Path, dict[str, list[bool]] | None] = {}  # file -> name -> each call under no_grad?
        self._emptiers: dict[Path, tuple[frozenset[str], frozenset[str]]] = {}  # file -> `_emptied_from_outside`
        self._made_in_resets: dict[Path, frozenset[str]] = {}  # file -> `_made_in_resets`
        self._words: dict[tuple[Path, str], bool] = {}  # (file, word) -> whether its text holds the word
        self._loaders: dict[Path, dict[str, list[Workers]]] = {}  # file -> `loaders_in`
        self._zero_workers: dict[Path, bool] = {}  # file -> `_workers_setting_zero`
        self._imports_of: dict[Path, list[Path]] = {}  # file -> the project's modules it imports

    def resolve(self, importer: Path, origin: str, analyze: Analyzer, depth: int = 0) -> Resolved | None:
        """`utils.AverageMeter` or `.utils.AverageMeter`, imported by `importer`; a module read for
        the first time is analysed with `analyze`. A module that only re-exports the name (a
        package's `__init__`: `from .meters import AverageMeter`, or `import *`) is read, not
        parsed, and followed to the module that defines it."""
        module_name, _, name = origin.rpartition(".")
        if not module_name or not name:
            return None
        for path in self._files(importer, module_name):
            self.loaded.add(path)  # the result depends on this file, found there or not
            if name in self._defined_names(path):
                facts = self._analyzed(path, analyze)
                if facts is not None:
                    return Resolved(facts, name, path)
                continue
            if depth >= _MAX_RE_EXPORTS:
                continue
            for module, exported, local in self._re_exported(path):
                if local == name or exported == "*":
                    found = self.resolve(path, f"{module}.{exported if local == name else name}", analyze, depth + 1)
                    if found is not None:
                        return found
        return None

    def method_definer(self, importer: Path, method: str, analyze: Analyzer) -> Facts | None:
        """The analysed module of the importer's project that alone defines a method named `method`
        (`self.logger.log_stat(...)` on a logger handed in, of a class no import names), if one does.
        The result cache records the module found and the folder scanned: a second definer added
        there later is seen."""
        scan = self._scan(importer)
        if scan is None:
            return None
        self.loaded.add(scan.folder)
        paths = scan.defining(method)
        if len(paths) != 1 or paths[0] == importer.resolve():
            return None
        self.loaded.add(paths[0])
        return self._analyzed(paths[0], analyze)

    def emptied_elsewhere(self, importer: Path, attribute: str, owner_class: str) -> bool:
        """Whether another module of the project that uses `owner_class` empties the attribute of
        an object it holds, in a function other than `__init__` (`self.mac_unit.history = []`,
        `unit.history.clear()`, `del unit.history[:]` in the model's forward): a parent that
        resets its child's list as it runs. The text scan finds the candidates, Python's parser
        confirms them (not a comment, not an unrelated class's name)."""

        def empties(path: Path) -> bool:
            if path not in self._emptiers:
                self._emptiers[path] = _emptied_from_outside(self._text(path))
            names, emptied = self._emptiers[path]
            return owner_class in names and attribute in emptied

        return self._elsewhere(importer, lambda scan: scan.emptying(attribute), empties)

    def made_afresh_elsewhere(self, importer: Path, owner_class: str) -> bool:
        """Whether another module of the project, one that imports the class, makes an object of
        `owner_class` afresh in a reset and keeps it on an object (`self.history_buffer =
        HistoryBuffer(...)` in an environment's `reset()`): each episode gets its own, and what it
        keeps lasts that episode."""
        here = importer.resolve()

        def makes(path: Path) -> bool:
            if not self._may_import(path, here, owner_class):
                return False  # (a module that names another class so)
            if path not in self._made_in_resets:
                self._made_in_resets[path] = _made_in_resets(self._text(path))
            return owner_class in self._made_in_resets[path]

        return self._elsewhere(importer, lambda scan: scan.calling(owner_class), makes)

    def _elsewhere(
        self, importer: Path, candidates: Callable[[_Scan], list[Path]], holds: Callable[[Path], bool]
    ) -> bool:
        """Whether a module of the importer's project other than it, among those the text scan
        finds, holds what its parser confirms."""
        scan = self._scan(importer)
        if scan is None:
            return False
        self.loaded.add(scan.folder)  # a module added there later may be the one
        here = importer.resolve()
        for path in candidates(scan):
            if path != here and holds(path):
                self.loaded.add(path)
                return True
        return False

    def called_elsewhere(self, importer: Path, name: str) -> bool | None:
        """Whether another module of the importer's project may call a function or method so
        named (the text scan's superset: `name(` anywhere); None without a root marker, where the
        project has no end to read. Any module may add such a call later: the answer "no"
        depends on them all."""
        scan = self._scan(importer)
        if scan is None:
            return None
        self.loaded.add(scan.folder)
        here = importer.resolve()
        callers = [path for path in scan.calling(name) if path != here]
        self.loaded.update(callers[:1] or scan.modules)
        return bool(callers)

    def calls_under_no_grad(self, importer: Path, name: str, owner: str | None) -> list[bool]:
        """For each call of a function or method so named in the other modules of the importer's
        project (`with torch.no_grad(): pred = model.inference(g, x)` in train.py), whether it runs
        under `no_grad` or `inference_mode`; a module that cannot be read counts as a call with
        gradients on. Only modules that name what defines it count: its class (`owner`), or for a
        function, its module. A method named in words (`get_sampling_output`, not `score`, which
        a library's objects have too) is also called by a module that never names its class
        where the nearest module defining a method so named is its own (`model.get_sampling_output(...)`
        in a criterion handed the model); where another is as near, only calls with gradients on
        count. The whole project is read up to `_MAX_SCANNED_FOR_CALLS` modules, else the
        importer's folder (a repository of examples has a `SAGE.inference` in each): reading
        more costs more than a file's check."""
        scan = self._scan_for_calls(importer)
        if scan is None:
            return []
        here = importer.resolve()
        definers = scan.defining(name) if owner is not None and "_" in name.strip("_") else []
        if definers:  # which modules define a method so named is read from every module's text
            self.loaded.update(scan.modules)
        found: list[bool] = []
        for path in scan.calling(name):
            if path == here:
                continue
            named = self._names(path, owner or here.stem)
            nearest = _nearest(path, definers)
            if not named and here not in nearest:
                continue
            calls = self._grad_free_calls(path)
            if calls is not None and name not in calls:
                continue  # the text scan's match is no call (a string, a comment)
            self.loaded.add(path)
            if calls is None:
                return [False]  # never turns gradients off, or cannot be read: called with them on
            found += calls[name] if named or nearest == [here] else [quiet for quiet in calls[name] if not quiet]
        return found

    def loaders_elsewhere(self, importer: Path, name: str) -> list[bool]:
        """For each DataLoader in the other modules of the importer's project that visibly runs
        `name` (built over an instance of the dataset class so named, or given the function so
        named as `collate_fn`/`worker_init_fn`), whether it has workers (see `loaders_in`). The
        whole project is read, as for `emptied_elsewhere`: a library's loaders are built in its
        scripts and recipes, far from its datasets."""
        scan = self._scan(importer)
        if scan is None:
            return []
        self.loaded.add(scan.folder)  # a module added there later may build another loader
        here = importer.resolve()
        found: list[bool] = []
        building = scan.building_loaders()
        for path in building:
            if path == here or not self._may_import(path, here, name):
                continue
            loaders = self._loaders_of(scan, path)
            # A loader over a dataset the module does not name there may run this one too.
            found += loaders.get(name, []) + [True for workers in loaders.get(UNNAMED, []) if workers]
        # A module that makes the dataset and hands it to one it imports, whose loaders run the
        # datasets they are given (`Trainer(model, Dataset(text), None, config)` in the script,
        # `DataLoader(self.train_dataset, num_workers=config.num_workers)` in the trainer).
        for path in scan.modules:
            if (
                path == here
                or path in building
                or not (self._may_import(path, here, name) and self._imports(path, here))
            ):
                continue
            for imported in self._imported(path):
                if imported != here and imported in building:
                    found += self._loaders_of(scan, imported).get(UNNAMED, [])
        return found

    def _loaders_of(self, scan: _Scan, path: Path) -> dict[str, list[bool]]:
        """`loaders_in` of a module, each forwarded setting read from the program around it."""
        if path not in self._loaders:
            self._loaders[path] = loaders_in(self._text(path))
        self.loaded.add(path)
        return {
            run: [self._has_workers(scan, path, workers) for workers in each]
            for run, each in self._loaders[path].items()
        }

    def _has_workers(self, scan: _Scan, path: Path, workers: Workers) -> bool:
        """A loader's `Workers` read: a setting from the program around its module, a wrapper's
        `**kwargs` from the wrapper's calls in the project (none seen: it may have workers)."""
        if isinstance(workers, bool):
            return workers
        if workers is None:
            return not self._workers_setting_zero(scan, path)
        given: list[bool] = []
        for caller in scan.calling(workers.wrapper):
            self.loaded.add(caller)
            given += [
                self._has_workers(scan, caller, w) for w in _workers_of_calls(self._text(caller), workers.wrapper)
            ]
        return any(given) or not given

    def _workers_setting_zero(self, scan: _Scan, module: Path) -> bool:
        """Whether the program around a module sets `num_workers` to a literal 0 and to nothing
        else, where the module's loader reads it as a setting (`num_workers=config.num_workers`):
        the module, the project's modules that import it and those they import from the project
        (`num_workers = 0` in a config class, `TrainerConfig(num_workers=num_workers)` in the
        script after `num_workers = 0`). A string naming the setting (an argparse option, a config
        key), a parameter so named (its callers may pass anything) or a settings file of the
        project naming it (a YAML config, a launch script) may set it to anything."""
        if module not in self._zero_workers:
            self._zero_workers[module] = self._read_workers_setting(scan, module)
        return self._zero_workers[module]

    def _read_workers_setting(self, scan: _Scan, module: Path) -> bool:
        settings = [path for path in scan.settings if _size(path) <= _MAX_SETTINGS_BYTES]  # not a JSON dataset
        self.loaded.update(settings)
        if any(_WORKERS_SETTING.search(self._text(path)) for path in settings):
            return False
        program = [module] + [path for path in scan.modules if path != module and self._imports(path, module)]
        program += [imported for path in list(program) for imported in self._imported(path) if imported not in program]
        zero = False
        for path in dict.fromkeys(program):
            self.loaded.add(path)
            text = self._text(path)  # (read from disk at each call)
            if not _WORKERS_SETTING.search(text):
                continue
            values = _workers_settings(text)
            if values is None or False in values:
                return False
            zero = zero or True in values
        return zero

    def _imports(self, path: Path, module: Path) -> bool:
        """Whether a module of the project imports `module` (its imports resolved)."""
        return self._names(path, module.stem if module.name != "__init__.py" else module.parent.name) and (
            module in self._imported(path)
        )

    def _imported(self, path: Path) -> list[Path]:
        """The project's modules that a module imports, resolved (once per module)."""
        if path not in self._imports_of:
            found: list[Path] = []
            for name in _imported_module_names(self._text(path)):
                found += self._files(path, name)
            self._imports_of[path] = list(dict.fromkeys(found))
        return self._imports_of[path]

    def scans_calls(self, importer: Path) -> bool:
        """Whether `calls_under_no_grad` reads the importer's project (it has a root marker)."""
        return self._scan_for_calls(importer) is not None

    def _scan_for_calls(self, importer: Path) -> _Scan | None:
        """The modules that `calls_under_no_grad` reads: the whole project
        up to `_MAX_SCANNED_FOR_CALLS` modules, else the importer's folder up to
        `_MAX_SCANNED_FOLDER_FOR_CALLS`; None without a root marker. The result depends on the
        scanned folder's list of modules (the result cache)."""
        root = self._root(importer)
        if root is None:
            return None
        folder = self._folder(importer)
        for scanned, most in dict.fromkeys(((root, _MAX_SCANNED_FOR_CALLS), (folder, _MAX_SCANNED_FOLDER_FOR_CALLS))):
            scan = self._scan_of(scanned)
            if scan is not None and len(scan.modules) <= most:
                self.loaded.add(scan.folder)  # a module added there later changes the answer
                return scan
        return None

    def _may_import(self, path: Path, module: Path, name: str) -> bool:
        """Whether a module's text may import `name` from `module`: it names both, or the package
        whose `__init__.py` re-exports it (`from torchtune.data import padded_collate_packed`,
        which `data/__init__.py` imports from `._collate`)."""
        if not self._names(path, name):
            return False
        if self._names(path, module.stem):
            return True
        init = module.parent / "__init__.py"
        if module == init or not init.is_file():
            return False
        self.loaded.add(init)  # a re-export added there later changes the answer
        return self._names(init, name) and self._names(path, f"{module.parent.name} import")

    def _names(self, path: Path, word: str) -> bool:
        """Whether the module's text holds `word` as a whole word (once per module and word)."""
        key = (path, word)
        if key not in self._words:
            self._words[key] = re.search(rf"\b{re.escape(word)}\b", self._text(path)) is not None
        return self._words[key]

    def _grad_free_calls(self, path: Path) -> dict[str, list[bool]] | None:
        """What `calls_under_no_grad_in` finds, once per module; None also for a module that
        never names a way to turn gradients off (not parsed: every call there has them on)."""
        if path not in self._no_grad_calls:
            text = self._text(path)
            self._no_grad_calls[path] = calls_under_no_grad_in(text) if _NO_GRAD_WORDS.search(text) else None
        return self._no_grad_calls[path]

    def _scan(self, importer: Path) -> _Scan | None:
        """The text scan of every module below the importer's project root, made once per project;
        of the importer's own folder where the project is larger than `_MAX_SCANNED_MODULES`
        modules or `_MAX_SCANNED_ENTRIES` files and folders (an example of a large repository and
        the script beside it that runs it). None for a tree without a root marker (the scan would
        have no end) or a folder that large too."""
        root = self._root(importer)
        return None if root is None else self._scan_of(root) or self._scan_of(self._folder(importer))

    def _root(self, importer: Path) -> Path | None:
        """The root of the importer's project (where its absolute imports are looked for last),
        when a root marker shows it: a tree without one has no end to scan."""
        root = self._search_bases(self._folder(importer))[-1]
        return root if self._is_root(root) else None

    def _scan_of(self, folder: Path) -> _Scan | None:
        if folder not in self._scans:
            self._scans[folder] = self._scan_project(folder)
        return self._scans[folder]

    def _scan_project(self, root: Path) -> _Scan | None:
        modules: list[Path] = []
        settings: list[Path] = []
        entries = 0
        for folder, subfolders, files in walk_project(root):
            modules += [Path(folder, name) for name in files if name.endswith(".py")]
            settings += [Path(folder, name) for name in files if name.endswith(SETTINGS_SUFFIXES)]
            entries += len(subfolders) + len(files)
            if len(modules) > _MAX_SCANNED_MODULES or entries > _MAX_SCANNED_ENTRIES:
                return None
        return _Scan(root, modules, self._text, settings)  # below a resolved folder: resolved paths

    def _files(self, importer: Path, module_name: str) -> list[Path]:
        """The files `module_name` may mean for `importer`, resolved once per folder: resolving
        costs system calls, and the modules of a package import the same names again and again."""
        key = (self._folder(importer), module_name)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = [path.resolve() for path in self._candidates(*key)]
        if not found and not module_name.startswith("."):
            return self._on_added_paths(importer, module_name)
        return found

    def _on_added_paths(self, importer: Path, module_name: str) -> list[Path]:
        """The files `module_name` may mean in the folders the importer adds to `sys.path` by a
        literal path, relative to its own folder (`sys.path.append("droid_slam")` before
        `from geom import losses` in a training script at the repository's root)."""
        if importer not in self._path_additions:
            added = _SYS_PATH_ADDITION.findall(self._text(importer)) if importer.suffix == ".py" else []
            # relative ones only: a script run from its own folder; not a folder outside the project
            self._path_additions[importer] = [
                self._folder(importer) / folder for _, folder in added if not Path(folder).is_absolute()
            ]
        parts = module_name.split(".")
        return [path.resolve() for base in self._path_additions[importer] for path in self._module_files(base, parts)]

    def _candidates(self, folder: Path, module_name: str) -> list[Path]:
        """Files that `import module_name` may mean in `folder`, nearest first."""
        dots = len(module_name) - len(module_name.lstrip("."))
        parts = [p for p in module_name.lstrip(".").split(".") if p]
        if dots:
            for _ in range(dots - 1):
                folder = folder.parent
            bases = [folder]
        else:
            bases = self._search_bases(folder)
            if bases[-1].name == parts[0] and self._is_root(bases[-1]):
                bases = [*bases, bases[-1].parent]  # a project that is its own package: `import TTS.utils` in TTS/
        return [path for base in bases for path in self._module_files(base, parts)]

    def _module_files(self, base: Path, parts: list[str]) -> list[Path]:
        """`base/a/b.py` and `base/a/b/__init__.py` for `a.b`, those that are files. Text, not
        `Path`: the imports of a run probe thousands of candidates, most of them absent."""
        target = os.path.join(base, *parts)
        candidates = [target + ".py"] if parts else []  # (`from . import x`: no file beside the package)
        return [Path(c) for c in [*candidates, os.path.join(target, "__init__.py")] if self._is_file(c)]

    def _folder(self, importer: Path) -> Path:
        folder = self._folders.get(importer)
        if folder is None:
            folder = self._folders[importer] = importer.resolve().parent
        return folder

    def _search_bases(self, folder: Path) -> list[Path]:
        """Where absolute imports are looked for: the importer's folder and those above it, up to
        the project's root (the first with a `pyproject.toml`, `setup.py`, ... or `.git`)."""
        bases = self._bases.get(folder)
        if bases is None:
            bases = []
            for base in [folder, *folder.parents]:
                bases.append(base)
                if self._is_root(base):
                    break
            self._bases[folder] = bases
        return bases

    def _is_root(self, folder: Path) -> bool:
        return any(marker in self._listing(str(folder)) for marker in ROOT_MARKERS)

    # The file system does not change during a run: each probe is made once, and a folder is
    # listed once for every name looked for in it (the imports of a package's files probe the
    # same folders again and again, mostly for names that are not there). As Python's imports,
    # the names compare with their case, also where the file system ignores it.
    def _is_file(self, path: str) -> bool:
        found = self._probed_files.get(path)
        if found is None:
            folder, name = os.path.split(path)
            found = self._probed_files[path] = name in self._listing(folder) and os.path.isfile(path)
        return found

    def _listing(self, folder: str) -> frozenset[str]:
        names = self._listings.get(folder)
        if names is None:
            try:
                names = frozenset(os.listdir(folder))
            except OSError:  # no such folder, or not one
                names = frozenset()
            self._listings[folder] = names
        return names

    def star_bindings(self, importer: Path, module_name: str) -> dict[str, str]:
        """What `from module_name import *` binds that the module imports from outside the
        project (`from torch.autograd import Variable` there: `Variable` is torch's): local name
        to qualified origin. Names the module defines are resolved to it by `resolve`."""
        bound: dict[str, str] = {}
        for path in self._files(importer, module_name)[:1]:
            self.loaded.add(path)
            for module, exported, local in self._re_exported(path):
                if exported != "*" and not module.startswith(".") and not self._files(path, module):
                    bound.setdefault(local, f"{module}.{exported}")
        return bound

    def _re_exported(self, path: Path) -> list[tuple[str, str, str]]:
        """The file's `from module import name [as local]` statements, `*` included (a text scan)."""
        found = self._re_exports.get(path)
        if found is None:
            found = self._re_exports[path] = []
            for module, names in _FROM_IMPORT.findall(self._text(path)):
                for part in names.strip("()").replace("\\\n", " ").split(","):
                    words = part.split()
                    if len(words) == 1 or (len(words) == 3 and words[1] == "as"):
                        found.append((module, words[0], words[-1]))
        return found

    def _text(self, path: Path) -> str:
        try:
            return read_source(path) if path.stat().st_size <= _MAX_BYTES else ""
        except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
            return ""

    def _defined_names(self, path: Path) -> frozenset[str]:
        """The names that `def` or `class` statements in the file bind, and the objects its top level
        makes by a class (a text scan: a superset)."""
        names = self._definitions.get(path)
        if names is None:
            text = self._text(path)
            names = self._definitions[path] = frozenset(_DEFINITION.findall(text) + _INSTANCE.findall(text))
        return names

    def _analyzed(self, key: Path, analyze: Analyzer) -> Facts | None:
        """The module at `key`, a resolved path, analysed once while it is kept."""
        if key in self._modules:
            self._modules.move_to_end(key)
        else:
            self._modules[key] = None  # an import cycle finds nothing rather than recursing
            size = _size(key)
            analysed = _analyze(key, size, self, analyze)
            self._modules[key] = analysed[0] if analysed else None
            if analysed:
                self._texts[key] = analysed[1]
            self._sizes[key] = size  # after: modules analysed on the way may have evicted `key`
            while len(self._modules) > 1 and sum(self._sizes.values()) > self.capacity_bytes:
                oldest, dropped = self._modules.popitem(last=False)
                self._sizes.pop(oldest, None)
                self._texts.pop(oldest, None)
                if dropped is not None:
                    self._dropped.append(dropped)
        return self._modules[key]

    def parsed(self, path: Path, source: str) -> cst.Module | None:
        """The tree of `path` if a module that imports it had it parsed from this very text: a
        file checked after one that imports it is not parsed twice (trees are never changed)."""
        key = path.resolve()
        facts = self._modules.get(key)
        if facts is None or self._texts.get(key) != source:
            return None
        tree = facts.index.module_unit.node
        return tree if type(tree) is cst.Module else None

    def release_dropped(self) -> None:
        """Free the modules dropped while a file was checked: what the kept modules learnt from
        them is forgotten (they will be analysed again if needed), then their reference cycles
        are broken, so that reference counting frees their trees. Only between files: the file
        being checked may still use a module dropped on the way."""
        if not self._dropped:
            return
        dropped = {id(facts) for facts in self._dropped}
        for facts in self._modules.values():
            if facts is not None:
                imported = facts.imported_classes  # a dict its scratch copies share: changed in place
                for name in [n for n, (owner, _) in imported.items() if id(owner) in dropped]:
                    del imported[name]
        for facts in self._dropped:
            facts.index.release()
        self._dropped.clear()


def _emptied_from_outside(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names the source's code uses, and the attributes it empties on an object other than
    `self` itself in a function other than `__init__` (read once per module, asked per attribute)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset(), frozenset()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    emptied = {a for f in functions if f.name != "__init__" for node in ast.walk(f) for a in _emptied(node)}
    return frozenset(names), frozenset(emptied)


def _made_in_resets(source: str) -> frozenset[str]:
    """The classes whose objects a method named for a reset makes and keeps on an object
    (`self.buffer = HistoryBuffer(n)` in `reset`, `reset_episode`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    resets = [
        f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and resets_by_name(f.name)
    ]
    return frozenset(
        name
        for f in resets
        for node in ast.walk(f)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Attribute) for t in node.targets)
        and isinstance(node.value, ast.Call)
        and (name := _last_name(node.value.func)) is not None
    )


def _emptied(node: ast.AST) -> Iterator[str]:
    """`x.attr = []` (`{}`, `None`, `list()`, `dict()`), `x.attr.clear()`, `del x.attr[:]`, x not
    `self`: `attr`."""

    def outside(target: ast.expr) -> str | None:
        if isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name) and target.value.id == "self"):
            return target.attr
        return None

    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        value = node.value
        empty = (
            (isinstance(value, (ast.List, ast.Dict)) and not (value.keys if isinstance(value, ast.Dict) else value.elts))
            or (isinstance(value, ast.Constant) and value.value is None)
            or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "dict")
                and not value.args)
        )  # fmt: skip
        targets = node.targets if empty else []
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clear":
        targets = [node.func.value]
    elif isinstance(node, ast.Delete):
        targets = [
            t.value for t in node.targets
            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Slice) and t.slice.lower is None
            and t.slice.upper is None
        ]  # fmt: skip
    yield from (attribute for t in targets if (attribute := outside(t)) is not None)


def _nearest(path: Path, candidates: list[Path]) -> list[Path]:
    """The candidates sharing the most folders with `path` (more than one where they tie)."""
    shared = {c: len(Path(os.path.commonpath([path, c])).parts) for c in candidates}
    most = max(shared.values(), default=0)
    return [c for c in candidates if shared[c] == most]


def calls_under_no_grad_in(source: str) -> dict[str, list[bool]] | None:
    """Every call in the source by the name it calls (`f(...)`, `obj.f(...)`), and whether it runs
    under `no_grad`/`inference_mode` (a `with` block or a decorated function; `enable_grad()`
    turns gradients back on). None when the source does not parse. Python's parser: a module read
    only for this need not be parsed by LibCST."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    found: dict[str, list[bool]] = {}
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, quiet = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            decorators = node.decorator_list if not isinstance(node, ast.Lambda) else []
            quiet = any(_grad_mode(d) is False for d in decorators)  # a body runs when called, not where defined
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            modes = [mode for item in node.items if (mode := _grad_mode(item.context_expr)) is not None]
            if modes:
                stack += [(child, not modes[-1]) for child in node.body]
                continue
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name is not None:
                found.setdefault(name, []).append(quiet)
        stack += [(child, quiet) for child in ast.iter_child_nodes(node)]
    return found


UNNAMED = "?"  # `loaders_in`: what a loader over a dataset the code does not construct there runs
_WORKERS_SETTING = re.compile(r"num[_-]workers")


def _imported_module_names(source: str) -> list[str]:
    """The modules a source imports, as `Project._files` takes them (`src.trainer`, `.utils`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.append(base)
            # `from . import trainer`, `from src import trainer`: a module imported by name
            found += [f"{base}{'' if base.endswith('.') else '.'}{alias.name}" for alias in node.names]
    return [name for name in found if name.strip(".")]


def _workers_settings(source: str) -> list[bool] | None:
    """What a source gives a setting named `num_workers`, for each place it does: True for a
    literal 0, False for anything that may be more (another value, an option or key naming it as
    a string, a parameter so named); a setting handed on (`num_workers=config.num_workers`) gives
    nothing of its own. None when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None

    def given(value: ast.expr | None) -> list[bool]:
        if value is None or _last_name(value) == "num_workers":
            return []  # handed on, or declared without a value
        return [isinstance(value, ast.Constant) and type(value.value) is int and value.value == 0]

    found: list[bool] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_last_name(t) == "num_workers" for t in targets):
                found += given(node.value) if not isinstance(node, ast.AugAssign) else [False]
        elif isinstance(node, ast.keyword) and node.arg == "num_workers":
            found += given(node.value)
        elif isinstance(node, ast.Dict):
            found += [
                v for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == "num_workers" for v in given(value)
            ]  # fmt: skip
        elif isinstance(node, ast.arg) and node.arg == "num_workers":
            found.append(False)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _WORKERS_SETTING.search(node.value):
            found.append(False)  # `parser.add_argument("--num_workers")`, `cfg.get("num_workers", 4)`
    return found


def loaders_in(source: str) -> dict[str, list[Workers]]:
    """The DataLoaders the source builds, by what they run, where the source does not define it
    (imported): the class of the dataset (`DataLoader(Points(root), ...)`, or `ds = Points(root)`
    bound last before it in the same function; `UNNAMED` for a dataset it does not construct
    there, `self.train_set`), the functions given as `collate_fn` and `worker_init_fn`; per
    loader, whether it has workers (`num_workers` given and not a literal 0, or `**kwargs`, which
    may give it); None where it hands on the program's setting (`num_workers=config.num_workers`,
    see `Project._workers_setting_zero`); `Forwarded` where the only options it cannot see are the
    `**kwargs` of the function around it (a wrapper's: its callers give them). Python's parser;
    empty when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found: dict[str, list[Workers]] = {}
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    wrappers = _loader_wrappers(tree)
    for scope in scopes:
        nodes = list(_own_nodes(scope))
        bindings = sorted(  # (position, name, what builds it), in the order of the source
            ((node.lineno, node.col_offset), target.id, _called_name(node.value))
            for node in nodes
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        )
        for call in nodes:
            if not isinstance(call, ast.Call) or _called_name(call) not in LOADER_CLASSES:
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
            has_workers: Workers = _workers_given(call, 5)
            wrapper = wrappers.get(id(scope))
            if has_workers is True and wrapper is not None and _forwards_only_its_kwargs(call, scope, keywords):
                has_workers = Forwarded(wrapper)  # `DataLoader(ds, **kwargs)`: what its callers pass
            dataset = keywords.get("dataset", call.args[0] if call.args else None)
            if isinstance(dataset, ast.Name):  # the binding of the name last before the loader
                before = [
                    built for at, name, built in bindings if name == dataset.id and at < (call.lineno, call.col_offset)
                ]
                runs = [before[-1] if before else None]
            else:
                runs = [_called_name(dataset)]
            runs = [run if run is not None else UNNAMED for run in runs]  # `DataLoader(self.train_set)`
            runs += [run for k in ("collate_fn", "worker_init_fn") for run in _functions_given(keywords.get(k))]
            for name in runs:
                if name is not None and name not in defined:  # a class of its own is another one
                    found.setdefault(name, []).append(has_workers)
    return found


@dataclass(frozen=True)
class Forwarded:
    """A loader built with the `**kwargs` of the function around it: its workers are what the
    calls of `wrapper` pass (`DistributedDataLoader(ds, batch_size=8)` in the scripts)."""

    wrapper: str  # the function, or the class whose `__init__` it is


Workers = bool | None | Forwarded  # `loaders_in`: per loader, whether it has workers


def _workers_given(call: ast.Call, position: int | None) -> bool | None:
    """Whether a call gives a loader workers: `num_workers` (by keyword, or at `position`) given
    and not a literal 0, or `**options`, which may give it; None where it hands on the program's
    setting (`num_workers=config.num_workers`)."""
    workers = next((k.value for k in call.keywords if k.arg == "num_workers"), None)
    if workers is None and position is not None and len(call.args) > position:
        workers = call.args[position]
    if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return True
    if workers is None or (isinstance(workers, ast.Constant) and workers.value == 0):
        return False
    return None if _last_name(workers) == "num_workers" else True


def _loader_wrappers(tree: ast.Module) -> dict[int, str]:
    """The functions that may build a loader from what their callers pass, by the name the callers
    call: a function's own, or its class's for an `__init__` (`DistributedDataLoader(ds)`)."""
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.args.kwarg is not None:
                is_init = isinstance(node, ast.ClassDef) and child.name == "__init__"
                found[id(child)] = node.name if is_init else child.name  # type: ignore[attr-defined]
    return found


def _forwards_only_its_kwargs(call: ast.Call, scope: ast.AST, keywords: dict[str, ast.expr]) -> bool:
    """`DataLoader(ds, sampler=s, **kwargs)` in a function taking `**kwargs`: the only options it
    cannot see are those its callers pass."""
    kwarg = scope.args.kwarg  # type: ignore[attr-defined]
    unseen = [k.value for k in call.keywords if k.arg is None]
    return (
        "num_workers" not in keywords
        and len(call.args) <= 5
        and not any(isinstance(a, ast.Starred) for a in call.args)
        and len(unseen) == 1
        and isinstance(unseen[0], ast.Name)
        and unseen[0].id == kwarg.arg
    )


def _workers_of_calls(source: str, name: str) -> list[bool | None]:
    """For each call of `name` in a source (a loader wrapper), `_workers_given` by keyword."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return [True]  # cannot be read: it may give workers
    return [
        _workers_given(node, None)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _called_name(node) == name
    ]


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module's or function's own code, not of the functions and classes it defines."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack += ast.iter_child_nodes(node)


def _called_name(expr: ast.expr | None) -> str | None:
    """`Points` of `Points(root)` and of `data.Points(root)`."""
    return _last_name(expr.func) if isinstance(expr, ast.Call) else None


def _functions_given(expr: ast.expr | None) -> list[str | None]:
    """The functions an argument may be: `collate`, `partial(collate, pad=0)`, either branch of
    `collate_sft if not packed else collate_packed`."""
    if isinstance(expr, ast.IfExp):
        return _functions_given(expr.body) + _functions_given(expr.orelse)
    if isinstance(expr, ast.Call) and _called_name(expr) == "partial" and expr.args:
        return _functions_given(expr.args[0])
    return [_last_name(expr)]


def _last_name(expr: ast.expr | None) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None


def _grad_mode(expr: ast.expr) -> bool | None:
    """The grad mode inside `with expr:` or under `@expr` (see `grad_mode_set_by`); by name only,
    since the imports of a module read with `ast` are not resolved."""
    call = expr if isinstance(expr, ast.Call) else None
    func = call.func if call is not None else expr
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    first = call.args[0] if call is not None and call.args else None
    argument = first.value if isinstance(first, ast.Constant) and isinstance(first.value, bool) else None
    mode = grad_mode_set_by(name, argument, first is not None)
    if mode is not None or call is None:
        return mode
    keywords = [
        (k.arg, k.value.value if isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool) else None)
        for k in call.keywords
        if k.arg is not None
    ]
    return grad_mode_asked(keywords)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _analyze(path: Path, size: int, project: Project, analyze: Analyzer) -> tuple[Facts, str] | None:
    """The module's facts and the text they were read from."""
    if size > _MAX_BYTES:
        return None
    try:
        source = read_source(path)
        module = project.parse(source)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError, cst.ParserSyntaxError, RecursionError):
        return None
    return analyze(module, path, project), source
