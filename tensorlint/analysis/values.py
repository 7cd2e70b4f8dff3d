"""Abstract values: what the analysis knows about the value of an expression."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, cast

import libcst as cst

from tensorlint.analysis.names import (
    Imports,
    argument,
    callee_name,
    dotted_name,
    literal_bool,
    receiver,
    string_value,
)
from tensorlint.source import MODEL_WORDS


@dataclass(frozen=True)
class Value:
    """Facts about one value; the default is "nothing known", which every rule reads as silence."""

    tensor: bool = False  # a torch.Tensor, or a structure of tensors (a model's output)
    graph: bool = False  # carries autograd history: keeps the activations it was computed from
    module: bool = False  # an nn.Module or a loss: calling it computes tensors
    cuda: bool = False  # a device, or a device string, that names CUDA
    scalar: bool = False  # known to be a plain Python value: `loss.item()`, `float(x)`, `0.0`
    instance: str | None = None  # an instance of this class of the module: `meter = AverageMeter()`
    # When summarising a function: the parameters whose graph this value carries.
    sources: frozenset[str] = field(default=frozenset(), compare=False)
    # The lambda or nested def this value is, when it captures tensors of its enclosing function.
    closure: cst.CSTNode | None = field(default=None, compare=False, repr=False)
    captured: tuple[str, ...] = ()
    frozen: bool = False  # a module set `requires_grad_(False)`: its output has no graph of its own
    exception: bool = False  # a caught exception: its traceback keeps the frames (TL007)
    # A leaf that requires grad (a parameter): it carries no history, what is computed from it does.
    requires_grad: bool = False
    host: bool = False  # in host memory (`x.cpu()`, `torch.from_numpy(a)`): kept, it costs no device memory
    # The entries of a dict display by key (`{"loss": loss, "n": len(batch)}`), or a record's fields
    # (`StepResult(loss=loss, seconds=dt)`): `out["n"]` reads its own value, not the join of all of
    # them; the flat fields above still describe the whole.
    keys: tuple[tuple[str, Value], ...] | None = field(default=None, compare=False, repr=False)

    def join(self, other: Value) -> Value:
        """What is known of a value that is one of the two."""
        # Most joins (the names an `if` leaves alone) meet the same value or nothing known: that
        # value is the answer as it is, unless it says what only both sides can say.
        if other is self and self.keys is None and (self.tensor or not self.host):
            return self
        if other is UNKNOWN and _kept_when_joined_with_nothing(self):
            return self
        if self is UNKNOWN and _kept_when_joined_with_nothing(other):
            return other
        keys = None
        if self.keys is not None or other.keys is not None:
            keys = _join_keys(self, other)
        return Value(
            tensor=self.tensor or other.tensor,
            graph=self.graph or other.graph,
            module=self.module or other.module,
            cuda=self.cuda or other.cuda,
            scalar=self.scalar and other.scalar,
            instance=self.instance or other.instance,
            sources=self.sources | other.sources,
            closure=self.closure or other.closure,
            captured=self.captured or other.captured,
            frozen=self.frozen and other.frozen,
            exception=self.exception or other.exception,
            requires_grad=self.requires_grad or other.requires_grad,
            # a tensor in host memory on every side that has one; a device naming the host on both
            host=(self.host or not self.tensor)
            and (other.host or not other.tensor)
            and (self.tensor or other.tensor or (self.host and other.host)),
            keys=keys,
        )

    def without_graph(self) -> Value:
        keys = None if self.keys is None else tuple((k, v.without_graph()) for k, v in self.keys)
        return replace(self, graph=False, requires_grad=False, keys=keys)

    def entry(self, key: str) -> Value | None:
        """The value under `key` of a dict display or a record's field, when the code shows them."""
        for name, value in self.keys or ():
            if name == key:
                return value
        return None

    @property
    def keeps_memory(self) -> bool:
        """A tensor whose memory a reference keeps: not a parameter (or a structure of them),
        which lives as long as its module whoever else refers to it."""
        return self.tensor and (self.graph or not self.requires_grad)


def _kept_when_joined_with_nothing(value: Value) -> bool:
    """Whether `value.join(UNKNOWN)` is `value`: not a number or frozen (both sides must be), not
    said to be in host memory without being a tensor."""
    return not (value.scalar or value.frozen) and (value.tensor or not value.host)


def _join_keys(a: Value, b: Value) -> tuple[tuple[str, Value], ...] | None:
    """The entries of a dict that is one of two: joined by key when both show theirs; a side
    that is known to be nothing (the start of a join) leaves the other's."""
    if a.keys is None or b.keys is None:
        if (a if a.keys is None else b) == UNKNOWN:
            return a.keys if b.keys is None else b.keys
        return None
    entries = dict(a.keys)
    for key, value in b.keys:
        entries[key] = entries[key].join(value) if key in entries else value
    return tuple(entries.items())


UNKNOWN = Value()
TENSOR = Value(tensor=True)
GRAPH = Value(tensor=True, graph=True)
PARAMETER = Value(tensor=True, requires_grad=True)
MODULE = Value(module=True)
CUDA = Value(cuda=True)
HOST = Value(host=True)  # a device that names the host: `def infer(x, device="cpu")`
SCALAR = Value(scalar=True)
EXCEPTION = Value(exception=True)

# torch functions that do not return a tensor.
_TORCH_NON_TENSOR = frozenset(
    [
        "device",
        "dtype",
        "no_grad",
        "enable_grad",
        "inference_mode",
        "numel",
        "manual_seed",
        "seed",
        "initial_seed",
        "save",
        "load",
        "compile",
        "get_default_dtype",
        "get_num_threads",
        "use_deterministic_algorithms",
        "typename",
        "autocast",
        "finfo",
        "iinfo",
        "Size",
        "Generator",
        "get_default_device",
    ]
)


def _torch_non_tensor(name: str) -> bool:
    """torch functions that return no tensor: the list above, queries (`torch.is_autocast_enabled()`,
    `torch.cuda.is_available()`: Python bools) and setters."""
    return name in _TORCH_NON_TENSOR or name.startswith(("is_", "set_"))


# torch functions that make a new tensor shaped like their argument, without its autograd history.
_TORCH_SHAPED_LIKE = frozenset(
    ["zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"]
)
_TENSOR_NAMESPACES = frozenset(
    ["torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.sparse"]
)
# Tensor methods whose result carries no autograd history.
_NO_GRAPH_METHODS = frozenset(
    [
        "detach",
        "detach_",
        "sample",  # a distribution's draw: no gradient flows through it (`rsample` keeps one)
        "multinomial",  # indices drawn: integers
        "argmax",
        "argmin",
        "argsort",
        "long",
        "int",
        "short",
        "bool",
        "byte",
        "char",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "isnan",
        "isinf",
        "isfinite",
        "nonzero",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "new_tensor",
        "logical_not",
        "logical_and",
        "logical_or",
        "eq_",
        "ne_",
        "bincount",
    ]
)
# Tensor methods whose result is computed from their tensor arguments as from the receiver.
_COMBINING_METHODS = frozenset(
    ["add", "sub", "mul", "div", "true_divide", "matmul", "mm", "bmm", "mv", "dot", "pow", "lerp", "addcmul",
     "addcdiv", "addmm", "baddbmm", "where", "maximum", "minimum", "atan2", "hypot",
     # what they write into the receiver (`src.new_zeros(size).scatter_add_(dim, index, src)`)
     "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_put", "masked_scatter", "put",
     "copy"]
)  # fmt: skip
# Tensor methods that give a number whatever has them (a tensor, an array, a queue's `size()`).
_SHAPE_METHODS = frozenset(["size", "dim", "numel", "nelement", "ndimension", "stride", "element_size"])
# Tensor methods that return Python values.
_NON_TENSOR_METHODS = _SHAPE_METHODS | frozenset(
    [
        "item",
        "tolist",
        "numpy",
        "data_ptr",
        "is_contiguous",
        "storage_offset",
        "get_device",
        "is_floating_point",
        "backward",
        "register_hook",
        "keys",  # a dict's (or a TensorDict's) keys: names, not tensors
    ]
)
# Words of a method named for a copy that can be kept: detached, on the host, or a number.
_STORABLE_COPY_WORDS = frozenset(["cacheable", "detached", "storable", "serializable", "cpu", "host", "numpy", "np"])
_NO_GRAPH_ATTRIBUTES = frozenset(["data", "grad"])
_TENSOR_ATTRIBUTES = frozenset(["T", "mT", "H", "mH", "real", "imag"])
# What torch.nn's layers name their parameters.
PARAMETER_ATTRIBUTES = frozenset(["weight", "bias"])
_LABEL_WORDS = frozenset(["target", "targets", "label", "labels", "gt", "gts", "mask", "masks"])
_NON_TENSOR_ATTRIBUTES = frozenset(
    [
        "shape",
        "dtype",
        "device",
        "requires_grad",
        "ndim",
        "is_cuda",
        "is_leaf",
        "grad_fn",
        "layout",
        "names",
        "is_sparse",
    ]
)
# Module methods that return the module itself.
_MODULE_RETURNING = frozenset(
    [
        "to",
        "cuda",
        "cpu",
        "train",
        "eval",
        "half",
        "float",
        "double",
        "bfloat16",
        "requires_grad_",
        "type",
        "share_memory",
        "to_empty",
    ]
)
# Module bases outside torch.nn that make a class an nn.Module.
_MODULE_BASES = frozenset(
    [
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.module.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    ]
)
# torch.nn's layers without parameters (activations, dropout, pooling, reshaping, padding).
_PARAMETER_FREE = frozenset(
    ["Softmax", "LogSoftmax", "Softmin", "Softmax2d", "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU",
     "SiLU", "Mish", "Sigmoid", "LogSigmoid", "Tanh", "Hardtanh", "Hardsigmoid", "Hardswish", "Softplus",
     "Softsign", "Softshrink", "Hardshrink", "Tanhshrink", "Threshold", "Dropout", "Dropout1d", "Dropout2d",
     "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d",
     "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
     "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "UpsamplingNearest2d",
     "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance", "ZeroPad2d",
     "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
     "ReplicationPad2d", "ReplicationPad3d", "ChannelShuffle", "Unfold", "Fold", "ZeroPad1d", "ZeroPad3d",
     "ReflectionPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "GLU", "LPPool1d", "LPPool2d",
     "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "FeatureAlphaDropout"]
)  # fmt: skip
_BUILTIN_REDUCTIONS = frozenset(["sum", "abs"])
_COPYING_BUILTINS = frozenset(["dict", "list", "tuple", "sorted", "reversed"])
_NON_TENSOR_BUILTINS = frozenset(["float", "int", "bool", "str", "len", "round", "repr", "format", "id", "hash"])


def _converts_to_numpy(name: str) -> bool:
    """Helpers named for a conversion to NumPy: `to_np`, `to_numpy`, `tensor2numpy`, `as_np`."""
    lowered = name.lower()
    return lowered.startswith(("to_", "as_", "tensor2", "tensor_to_", "t2")) and lowered.endswith(("np", "numpy"))


# Module base classes of the big model libraries, as their own files import them (relatively).
_MODULE_BASE_NAMES = frozenset(["LightningModule", "PreTrainedModel", "ModelMixin"])


def is_torch_module_class(qualified: str | None) -> bool:
    """`torch.nn.Linear`, `torch.nn.CrossEntropyLoss`, `lightning.LightningModule`, ..."""
    if qualified is None:
        return False
    if qualified in _MODULE_BASES or qualified.rsplit(".", 1)[-1] in _MODULE_BASE_NAMES:
        return True
    if not qualified.startswith("torch.nn."):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return last[:1].isupper() and last != "Parameter" and not qualified.startswith("torch.nn.functional.")


def is_module_forward_method(name: str) -> bool:
    """Module methods that run the network: `forward`, timm's `forward_features`, `encode`."""
    return name == "forward" or name.startswith(("forward_", "encode", "decode", "extract_feat"))


def is_model_name(name: str) -> bool:
    """A parameter named like a network: `model`, `net`, `ema_model`, `text_encoder`."""
    lowered = name.lower()
    return lowered in MODEL_WORDS or lowered.rsplit("_", 1)[-1] in MODEL_WORDS - {"module"}


def names_a_log(name: str) -> bool:
    """The record of numbers a step reports beside its loss: `loss, log_vars = model(x)`,
    `loss, sample_size, logging_output = criterion(model, sample)`, ESPnet's and icefall's
    `loss, stats, weight = model(...)` (`stats_g`, `stats_d` of a GAN's two passes), and
    Megatron's `loss, loss_reduced = loss_func(output)`: the loss averaged over the data-parallel
    ranks for the log (`torch.distributed` reductions are not recorded by autograd, so the copy
    reduced is taken detached)."""
    lowered = name.lower()
    words = lowered.split("_")
    return lowered in _LOG_NAMES or words[0] == "stats" or "reduced" in words


_LOG_NAMES = frozenset(["log", "logs", "log_dict", "log_vars", "logging_output", "logging_outputs", "log_info",
                        "info", "infos", "extra_info"])  # fmt: skip


def names_a_count(name: str) -> bool:
    """`number_of_nodes()`, `num_edges()`, `n_nodes`, `batch_size`, `sub_size`, `ntokens`, `encoded_len`, `tot_frames`:
    a size, a count or lengths, Python ints (graph libraries' batched graphs have these next to
    their tensors; a sequence model returns its lengths next to its outputs, a loss function the
    size of the batch next to the loss)."""
    lowered = name.lower()
    qualifier, _, counted = lowered.partition("_")
    return (
        lowered.startswith(("num_", "number_of_", "n_"))
        or lowered.endswith(("_count", "_length", "_lengths", "_lens", "_len", "_size"))
        or lowered in ("lengths", "lens", "ntokens", "nsentences", "nsamples")
        or (qualifier in ("tot", "total") and counted in _COUNTED_THINGS)  # icefall's `tot_frames`
    )


def spatial_sizes(names: Sequence[str]) -> set[str]:
    """The names among siblings (a tuple's targets, a function's parameters) that are an image's
    height and width, Python ints: `x, H, W = stage(x, H, W)`, `forward(self, x, Wh, Ww)`. Only as
    a pair: alone, `H` is as often a hidden state and `W` a weight matrix."""
    heights = {n for n in names if n in _HEIGHT_NAMES}
    widths = {n for n in names if n in _WIDTH_NAMES}
    return heights | widths if heights and widths else set()


# As vision code spells them, case and all (`h` and `w` are also a hidden state and a weight).
_HEIGHT_NAMES = frozenset(["H", "Hp", "Wh", "H_", "Ht", "height", "img_h", "feat_h"])
_WIDTH_NAMES = frozenset(["W", "Wp", "Ww", "W_", "Wt", "width", "img_w", "feat_w"])


# What a total counts, not sums: `total_tokens`, `tot_frames` (unlike `total_loss`).
_COUNTED_THINGS = frozenset(
    ["frames", "tokens", "samples", "examples", "utterances", "utts", "words", "sentences", "chars", "characters",
     "items", "nodes", "edges", "graphs", "pixels", "elements", "sequences", "seqs", "images", "batches"]
)  # fmt: skip


def names_a_counter(name: str) -> bool:
    """`iter`, `max_iters`, `global_step`, `epoch`, `get_num_updates`: where a loop stands, a
    Python int (not `loss_per_step`, `hidden_last_step`: values named for a step)."""
    *qualifiers, last = name.lower().strip("_").split("_")
    return last in _COUNTER_WORDS and all(word in _COUNTER_QUALIFIERS for word in qualifiers)


_COUNTER_WORDS = frozenset(["iter", "iters", "iteration", "iterations", "epoch", "epochs", "step", "steps", "updates"])
_COUNTER_QUALIFIERS = frozenset(["max", "global", "num", "n", "total", "cur", "current", "start", "inner", "outer",
                                 "get", "completed"])  # fmt: skip


def is_label_name(name: str) -> bool:
    """A parameter named for ground truth: `target`, `labels`, `y_true`, `gt_boxes`, `mask`. What a
    metric's `update` is given under such a name comes from the data, not from the model."""
    lowered = name.lower()
    words = set(lowered.split("_"))
    return bool(words & _LABEL_WORDS) or lowered in ("y_true", "ground_truth")


def is_input_name(name: str) -> bool:
    """A parameter named for what the data gives a step: `inputs`, `batch`, `input_ids`. A step is
    handed its batch, without a graph, under such a name (`training_step(self, model, inputs)`)."""
    lowered = name.lower()
    return lowered in _INPUT_NAMES or lowered.startswith("input_")


_INPUT_NAMES = frozenset(["input", "inputs", "batch", "batches", "data", "sample", "samples", "images"])


def is_data_name(name: str) -> bool:
    """A parameter named for what a step is given by the data, or for integer indices
    (`pred_index_mat`, `token_ids`): what a per-step method is handed under such a name has no
    graph, where a model's output would."""
    return is_label_name(name) or is_input_name(name) or bool(set(name.lower().split("_")) & _INDEX_WORDS)


def is_index_name(name: str) -> bool:
    """A name for integer indices (`position_ids`, `token_idx`, `indices`; not `index_embeds`):
    an integer tensor cannot require grad, so what it holds carries no graph, even in `forward`."""
    return name.lower().split("_")[-1] in _INDEX_WORDS


_INDEX_WORDS = frozenset(["index", "indices", "idx", "ids"])


def on_the_device(value: Value) -> bool:
    """A tensor without autograd history that is not known to be in host memory: kept, it holds
    device memory (a record of the project, `SubgraphInfo(...)`, may hold anything)."""
    return value.tensor and not (value.graph or value.host or value.scalar or value.module) and value.instance is None


def is_criterion_name(name: str) -> bool:
    """A name for a loss to call, not a loss value: `criterion`, `loss_fn`, `contrastive_loss_func`,
    `crit`, `l1_crit`."""
    lowered = name.lower()
    return (
        "criterion" in lowered
        or lowered.endswith(("loss_fn", "lossfn", "loss_func", "loss_function"))
        or "crit" in lowered.split("_")
    )


def is_loss_name(name: str) -> bool:
    """A function that computes a loss (`compute_loss`, `dice_loss`, `criterion`); not one that
    reports losses already computed (`reduce_loss_dict`, `log_losses`, `format_loss`)."""
    lowered = name.lower()
    if _REPORTING_WORDS & set(lowered.split("_")):
        return False
    return "loss" in lowered or "criterion" in lowered


_REPORTING_WORDS = frozenset(["reduce", "log", "format", "print", "str", "dict", "summary", "summarize", "report"])


def names_a_loss_class(name: str) -> bool:
    """A class named for a loss (`FocalLoss`, `Py4CastLoss`): a module that computes one from its inputs."""
    return name[:1].isupper() and name.endswith("Loss")


def names_a_loss_value(name: str) -> bool:
    """A name for a computed loss, not for a function, weight or scale of one: `loss`,
    `total_loss`, `d_loss`, `val_losses`, `gloss`."""
    lowered = name.lower()
    return lowered.endswith(("loss", "losses")) and not is_criterion_name(name)


class Scope(Protocol):
    """What an expression's value depends on: the names in scope and the grad mode."""

    imports: Imports
    grad_enabled: bool
    turns_gradients_on: bool  # the module turns them on somewhere: a network frozen when built may thaw
    # id(call) -> its value, while nothing the value depends on changes (the walker empties it
    # at each statement): an expression's calls are asked for again as parts of larger ones.
    call_values: dict[int, Value]

    def lookup(self, name: str) -> Value: ...

    def attribute_of_self(self, expr: cst.BaseExpression) -> Value | None:
        """The value of `self.x`, when `expr` is an attribute of the method's `self`."""
        ...

    def items_of_attribute(self, container: cst.BaseExpression) -> Value | None:
        """What `self.x[key] = value` puts in `self.x`, when `container` is that attribute of the
        method's `self` or of an instance of a project class the code shows."""
        ...

    def attribute_of_instance(self, owner: Value, name: str) -> Value | None:
        """The value of `obj.x`, when `obj` is an instance of a project class the code shows."""
        ...

    def engine_output(self) -> Value | None:
        """`engine.state.output` in an ignite handler: what the engine's process function returns."""
        ...

    def sets_attribute(self, name: str) -> bool:
        """Whether the file assigns an attribute so named, on `self` or on another object."""
        ...

    def item_of_instance(self, owner: Value) -> Value | None:
        """The value of `obj[key]`, when `obj` is an instance of a project class (a subclass of
        dict) whose methods put one class's instances in itself: `self[key] = Meter()`."""
        ...

    def is_local_module_class(self, name: str) -> bool: ...

    def is_record_type(self, name: str) -> bool:
        """`Transition`, bound in the module by `namedtuple(...)` (or `NamedTuple(...)`)."""
        ...

    def option_defaults(self) -> Mapping[str, cst.BaseExpression]:
        """The defaults of the command-line options the module declares (`add_argument`)."""
        ...

    def is_local_function(self, name: str) -> bool:
        """Whether `name` is a function defined in this file, in scope here."""
        ...

    def local_instance(self, name: str, args: list[Value]) -> Value | None:
        """The value of `Name(...)` when `Name` is a class of this module."""
        ...

    def summarized_call(self, call: cst.Call, args: list[Value]) -> Value | None:
        """What a call of a function or method of this module returns, from its summary."""
        ...

    def module_call(self, call: cst.Call, args: list[Value]) -> Value | None:
        """What calling a project module gives where its `forward` visibly drops the graph."""
        ...

    def closure_value(self, node: cst.Lambda) -> Value:
        """A lambda's value: which tensors of the enclosing function it captures."""
        ...


def evaluate(expr: cst.BaseExpression, scope: Scope) -> Value:
    """What is known of `expr`'s value, in the given scope."""
    # Compared by type, not isinstance: these node classes are final, and isinstance against
    # LibCST's ABCs is the analysis' most frequent slow call.
    if type(expr) is cst.Name:
        return scope.lookup(expr.value)
    if type(expr) is cst.Attribute:
        return _attribute(expr, scope)
    if type(expr) is cst.Call:
        value = scope.call_values.get(id(expr))
        if value is None:
            value = scope.call_values[id(expr)] = _call(expr, scope)
        return value
    if type(expr) is cst.Subscript:
        base = evaluate(expr.value, scope)
        if base.keys is not None and (entry := base.entry(text_key(expr) or "")) is not None:
            return entry  # `out["n"]` of `{"loss": loss, "n": len(batch)}`
        if base.module and not base.tensor:
            return MODULE  # self.blocks[i]
        key = text_key(expr) if base.tensor else None
        if key is not None and names_text(key):
            return UNKNOWN  # `batch["end_date_str"]`, `batch["file_name"]`: a batch's strings, not tensors
        if key is not None and names_a_count(key):
            return SCALAR  # `sample["ntokens"]`, `batch["num_graphs"]`: a count, a Python int
        if key is not None and names_integer_field(key):
            return replace(_derived(base, scope), graph=False, requires_grad=False)
        if base.instance is not None and not base.tensor:
            # `meters["loss"]` of `{"loss": Meter()}`: a container's values stand for its items;
            # those of an instance of a dict's subclass are what its methods put in it
            return scope.item_of_instance(base) or base
        if not base.tensor and (items := scope.items_of_attribute(expr.value)) is not None:
            return items  # `self.state["loss"]` after `self.state["loss"] = loss` in another method
        return _derived(base, scope) if base.tensor else UNKNOWN
    if type(expr) is cst.BinaryOperation:
        return _arithmetic(evaluate(expr.left, scope).join(evaluate(expr.right, scope)), scope)
    if type(expr) is cst.UnaryOperation:
        if type(expr.operator) is cst.Not:
            return UNKNOWN
        return _arithmetic(evaluate(expr.expression, scope), scope)
    if type(expr) is cst.Comparison:
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        return TENSOR if any(evaluate(o, scope).tensor for o in operands) else UNKNOWN
    if type(expr) is cst.BooleanOperation:
        return evaluate(expr.left, scope).join(evaluate(expr.right, scope))
    if type(expr) is cst.IfExp:
        return _branch(expr.body, expr.test, True, scope).join(_branch(expr.orelse, expr.test, False, scope))
    if type(expr) is cst.Tuple or type(expr) is cst.List or type(expr) is cst.Set:
        return _elements([evaluate(e.value, scope) for e in expr.elements])
    if type(expr) is cst.Dict:
        values = [evaluate(e.value, scope) for e in expr.elements]  # `{**stats, "n": n}`: the mapping's values too
        keyed = [
            (key, value)
            for e, value in zip(expr.elements, values, strict=True)
            if type(e) is cst.DictElement and (key := string_value(e.key)) is not None
        ]
        whole = _elements(values)
        return replace(whole, keys=tuple(keyed)) if keyed and len(keyed) == len(expr.elements) else whole
    if (
        type(expr) is cst.ListComp
        or type(expr) is cst.SetComp
        or type(expr) is cst.GeneratorExp
        or type(expr) is cst.DictComp
    ):
        return _comprehension(expr, scope)
    if type(expr) is cst.SimpleString or type(expr) is cst.FormattedString:
        text = string_value(expr)
        return CUDA if text is not None and text.startswith("cuda") else UNKNOWN
    if type(expr) is cst.NamedExpr:
        return evaluate(expr.value, scope)
    if type(expr) is cst.Integer or type(expr) is cst.Float:
        return SCALAR
    if type(expr) is cst.Lambda:
        return scope.closure_value(expr)
    return UNKNOWN


def names_integer_field(name: str) -> bool:
    """`encoded["input_ids"]`, `encoded.attention_mask`, `batch.edge_index`, `item_idx`: integer
    tensors, which cannot require grad, whatever made the record that holds them. (Not any
    `*_index`: a regressor's `severity_index` is a float with a graph.)"""
    return name.lower().split("_")[-1] in _ID_WORDS or name in _INTEGER_FIELDS


_ID_WORDS = frozenset(["ids", "idx", "id", "posid", "posids"])
_INTEGER_FIELDS = frozenset(["attention_mask", "edge_index", "indices"])


def text_key(expr: cst.Subscript) -> str | None:
    """The key of `batch["file_name"]`, a subscript by a string."""
    index = expr.slice[0].slice if len(expr.slice) == 1 else None
    return string_value(index.value) if type(index) is cst.Index else None


def names_text(name: str) -> bool:
    """A field named for text or kinds, not for tensors: `*_str`, `*name*`, `*path*`, `*file*`,
    `*date*`, `*text*`, `*types` (`g.canonical_etypes`). (Not `*_ids`: `input_ids` are tensors.)"""
    words = name.lower().replace("-", "_").split("_")
    return any(w in _TEXT_WORDS for w in words) or words[-1].endswith("types")


_TEXT_WORDS = frozenset(["str", "string", "name", "names", "path", "paths", "file", "files", "filename",
                         "date", "dates", "text", "texts", "caption", "captions", "url", "uid", "key", "keys"])  # fmt: skip


def _elements(values: list[Value]) -> Value:
    """A tuple's, list's or dict's value: Python numbers when every element is one (`(loss.item(), n)`)."""
    if values and all(value.scalar for value in values):
        return SCALAR
    return _join(values)


def _join(values: object) -> Value:
    result = UNKNOWN
    for value in values:  # type: ignore[attr-defined]
        result = result.join(value)
    return result


def _arithmetic(operands: Value, scope: Scope) -> Value:
    if operands.tensor:
        return _derived(operands, scope)
    return SCALAR if operands.scalar else UNKNOWN  # `out.size(0) / x.size(0)`: numbers only


def _derived(inputs: Value, scope: Scope) -> Value:
    """A tensor computed from `inputs`: it carries their graph (and its sources) if grad is on,
    and it is where they are."""
    graph = (inputs.graph or inputs.requires_grad) and scope.grad_enabled
    return Value(tensor=True, graph=graph, sources=inputs.sources if graph else frozenset(), host=inputs.host)


def _comprehension(expr: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, scope: Scope) -> Value:
    """What the element expression builds (a dict's values: `{k: v.detach() for k, v in
    losses.items()}`). Its loop variables are unknown, except over items with a graph:
    `sum(log.get("loss", 0) for log in logging_outputs)` reads each item's history."""
    bound: dict[str, Value] = {}
    inner = scope  # with `bound`, a scope that answers as `scope` does but for those names
    loop: cst.CompFor | None = expr.for_in
    while loop is not None:
        iterated = evaluate(loop.iter, inner)
        # Its own names hide the function's (`for k, v in running.items()` beside a loop's `v`).
        bound.update((n.value, UNKNOWN) for n in [loop.target, *_unpacked(loop.target)] if type(n) is cst.Name)
        if iterated.graph and not iterated.module:
            item = replace(iterated, keys=None)
            target = _item_target(loop)
            bound.update((n.value, item) for n in [target, *_unpacked(target)] if type(n) is cst.Name)
        inner = cast(Scope, _Bound(scope, bound))
        loop = loop.inner_for_in
    element = evaluate(expr.value if isinstance(expr, cst.DictComp) else expr.elt, inner)
    return Value(tensor=element.tensor, graph=element.graph, module=element.module, host=element.host)


# Methods whose items pair a name with a value: `for name, t in d.items()` binds the value to `t` only.
KEYED_ITEMS = frozenset(["items", "named_parameters", "named_buffers"])


def _item_target(loop: cst.CompFor) -> cst.BaseExpression:
    """What an item of the iterable binds: `v` of `for k, v in d.items()` (`k` is a name)."""
    target = loop.target
    if (
        type(target) is cst.Tuple
        and len(target.elements) == 2
        and type(loop.iter) is cst.Call
        and callee_name(loop.iter) in KEYED_ITEMS
    ):
        return target.elements[1].value
    return target


class _Bound:
    """A scope with a comprehension's loop variables bound; everything else asked of the scope around."""

    def __init__(self, outer: Scope, bound: dict[str, Value]) -> None:
        self._outer = outer
        self._bound = bound

    def lookup(self, name: str) -> Value:
        found = self._bound.get(name)
        return found if found is not None else self._outer.lookup(name)

    def __getattr__(self, name: str) -> object:
        return getattr(self._outer, name)


def _unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The elements of an unpacking target, nested: `k, (a, b)`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in [e.value, *_unpacked(e.value)]]
    return []


def _attribute(expr: cst.Attribute, scope: Scope) -> Value:
    of_self = scope.attribute_of_self(expr)
    if of_self is not None:
        return of_self
    name = expr.attr.value
    if name == "output" and type(expr.value) is cst.Attribute and expr.value.attr.value == "state":
        output = scope.engine_output()  # `engine.state.output` of an ignite engine
        if output is not None:
            return output
    base = evaluate(expr.value, scope)
    if base.keys is not None and (entry := base.entry(name)) is not None:
        return entry  # `result.seconds` of `StepResult(objective=loss, seconds=dt)`
    if base.exception and name == "__traceback__":
        return EXCEPTION
    if base.instance is not None and not base.tensor:
        known = scope.attribute_of_instance(base, name)  # `runner.net`: what `Runner` assigns to `self.net`
        if known is not None:
            return known
    if base.module and not base.tensor:
        if name in PARAMETER_ATTRIBUTES:  # `self.fc.weight`: a parameter, unless the module is frozen
            return TENSOR if base.frozen else PARAMETER
        # `model.encoder` is a submodule; `model.device`, `model.config` or `model.tokenizer` (whose
        # `decode` gives text) are not.
        if name in _NON_TENSOR_ATTRIBUTES or name in ("config", "training") or name.strip("_") == "tokenizer":
            return UNKNOWN
        if (
            names_a_loss_value(name)
            and name.lower().strip("_") not in ("loss", "losses")
            and not scope.sets_attribute(name)
        ):
            # `layer.aux_loss`, `block.moe_loss`: a loss its forward left on the module (a router's
            # balancing loss, a quantiser's commitment loss), with that forward's graph; where the
            # file sets it (`module.bc_loss = bc_loss.detach()`), what it sets is not known here
            return Value(tensor=True, graph=scope.grad_enabled)
        return MODULE
    if not base.tensor:
        return UNKNOWN
    if name in _NON_TENSOR_ATTRIBUTES or names_text(name):
        return UNKNOWN  # `x.shape`, `g.canonical_etypes`, `batch.file_names`
    if names_a_count(name) or names_a_counter(name):
        return SCALAR  # `batch.num_graphs`; `runner.iter`, `trainer.max_epochs` of a runner holding the loss
    if name in _NO_GRAPH_ATTRIBUTES:
        return TENSOR
    if not base.keeps_memory and name not in _TENSOR_ATTRIBUTES:
        return UNKNOWN  # `param.ds_id`, `p._sharded`: what a framework sets on a parameter
    if names_integer_field(name):
        return replace(_derived(base, scope), graph=False, requires_grad=False)
    return _derived(base, scope)


def _call(call: cst.Call, scope: Scope) -> Value:
    qualified = scope.imports.qualify(call.func)
    if qualified is not None:
        known = _qualified_call(call, qualified, scope)
        if known is not None:
            return known
    args = [evaluate(arg.value, scope) for arg in call.args]
    name = callee_name(call)
    if name is not None and _converts_to_numpy(name):
        return SCALAR  # `to_np(loss)`, `utils.tensor2numpy(x)`: an array, without history
    if any(arg.keyword is not None and arg.keyword.value == "skip_special_tokens" for arg in call.args):
        return UNKNOWN  # `model.decode(ids, skip_special_tokens=True)`: a tokenizer's text
    recv = receiver(call)
    if recv is None and type(call.func) is cst.Name:
        if name in _NON_TENSOR_BUILTINS:
            return SCALAR
        if name is not None and scope.is_record_type(name):
            return _elements(args)  # `Transition(state, action)` of a `namedtuple`: a tuple of them
        if name in ("max", "min"):
            # One of its arguments, as it was (`max(0, alpha)` adds no history to a leaf); not its `key=`.
            return _join(a for arg, a in zip(call.args, args, strict=True) if arg.keyword is None)
        if name in _BUILTIN_REDUCTIONS:
            return _arithmetic(_join(args), scope)
        if name in _COPYING_BUILTINS:
            # `dict(loss_dict)`, `list(outputs)`: the same items, with their history. (Not more: a
            # `list(model.parameters())` is the model's own tensors, as long-lived as it.)
            copied = _join(args)
            return copied if copied.graph else UNKNOWN
        if name == "partial":  # functools.partial imported by name
            return _partial(call, scope)
        if (
            name == "getattr"
            and len(call.args) >= 2
            and (attribute := string_value(call.args[1].value) or "").isidentifier()
            and names_a_loss_value(attribute)
        ):
            # `getattr(module, "aux_loss", None)`: the loss so named (or the default). (Not every
            # attribute: `getattr(model, "noise_augmentor", None)` asks whether an optional part
            # exists, and what the code then runs through it is no more known than before.)
            read = evaluate(cst.Attribute(value=call.args[0].value, attr=cst.Name(attribute)), scope)
            return read.join(args[2]) if len(args) > 2 else read
        made = scope.lookup(name) if name is not None else UNKNOWN
        if type(made.closure) is cst.ClassDef:
            return made  # an instance of a class the function defines, whose methods capture its tensors
        instance = _instance(call, name, args, scope) if name is not None else None
        if instance is not None:
            return instance
    elif recv is not None and (dotted := scope.imports.through_module(call.func)) is not None:
        instance = _instance(call, dotted, args, scope)  # `lib.Trainer(...)`
        if instance is not None:
            return instance
    # `model(x)`, `self.fc(x)`: a module called. `model.named_children()` is a method instead.
    callee = scope.attribute_of_self(call.func) if recv is not None else evaluate(call.func, scope)
    if callee is None and type(call.func) is cst.Attribute and (owner := evaluate(call.func.value, scope)).instance:
        callee = scope.attribute_of_instance(owner, call.func.attr.value)  # `runner.net(x)`
    if callee is not None and callee.module:
        return scope.module_call(call, args) or _module_output(callee, args, scope)
    summarized = scope.summarized_call(call, args)
    if summarized is not None:
        return summarized
    if callee == UNKNOWN and qualified is None and name is not None and _names_the_trained_network(name):
        # `model(x)` after `model = build_model(cfg)`, `self.net(x)` after `self.net = registry.build(...)`:
        # a variable made by a factory the file does not show, named for a network, and called.
        return _module_output(MODULE, args, scope)
    if recv is not None and name is not None and _is_super(recv) and is_module_forward_method(name):
        return Value(tensor=True, graph=scope.grad_enabled)  # `super().forward(x)`: the module's own computation
    if recv is not None and name == "parse_args" and (defaults := scope.option_defaults()):
        # `args = parser.parse_args()`: `args.device` is the option's default, as far as the code says
        return Value(keys=tuple((dest, evaluate(default, scope)) for dest, default in defaults.items()))
    if recv is not None and name == "prediction_step" and _is_super(recv):
        return TENSOR  # a transformers Trainer's `(loss, logits, labels)`: on the device, made under no_grad
    if recv is not None and name is not None:
        owner = evaluate(recv, scope)
        if owner.module and not owner.tensor and owner.instance is None and is_model_name(name) and name[:1].islower():
            # `pl_module.backbone(x)`: a member of a network named for a network, called
            return _module_output(replace(MODULE, frozen=owner.frozen), args, scope)
        method = _method_call(name, owner, call, scope)
        if method is not None:
            return method
        if (through := passed_through(call)) is not None and not (qualified or "").startswith("torch."):
            return evaluate(through, scope)
        if owner == UNKNOWN and _lightning_step(name, args):
            return Value(tensor=True, graph=scope.grad_enabled)
        if owner == UNKNOWN and qualified is None and name.split("_")[0] in _MAKES_A_NETWORK and is_model_name(name):
            return MODULE  # `accelerator.prepare_model(model)`, `self.build_model(cfg)`: a network, not its output
        if (
            owner == UNKNOWN
            and qualified is None
            and name[:1].islower()
            and name.split("_")[0] not in _ACTS_ON_A_NETWORK
            and (is_model_name(name) or is_criterion_name(name))
        ):
            # `trainer.model(x)`, `self.runner.crit(out, y)`: an object the file does not show,
            # holding a member named for a network or a criterion; called, it is that module.
            # (Not an imported module's function or class: `ir.Model(...)` builds something; nor
            # `learner.update_model(batch)`, a method that trains the network, not the network.)
            return _module_output(MODULE, args, scope)
    if name is not None and (is_loss_name(name) or is_criterion_name(name)):
        if any(a.graph for a in args):
            return _derived(_join(args), scope)
        if any(a.module and not a.frozen for a in args):  # `compute_loss(model, batch)`: it runs the network
            return _module_output(MODULE, args, scope)
    return UNKNOWN


def _after_a_module_method(call: cst.Call) -> bool:
    """`build(cfg).eval().requires_grad_(False)`: called on what `eval()` or `train()` returned, a module."""
    before = receiver(call)
    return type(before) is cst.Call and callee_name(before) in ("eval", "train") and receiver(before) is not None


def _instance(call: cst.Call, name: str, args: list[Value], scope: Scope) -> Value | None:
    """An instance of the project's class `name`; a record's fields each with its own value
    (`StepResult(objective=loss, seconds=dt)`)."""
    instance = scope.local_instance(name, args)
    if instance is not None and instance.tensor and call.args and all(arg.keyword for arg in call.args):
        fields = tuple((arg.keyword.value, a) for arg, a in zip(call.args, args, strict=True) if arg.keyword)
        return replace(instance, keys=fields)
    return instance


def passed_through(call: cst.Call) -> cst.BaseExpression | None:
    """The argument of a collective that hands its input back on one process, or a gathered copy
    on several: `accelerator.gather_for_metrics((logits, labels))`, `self.all_gather(preds)`."""
    if not (type(call.func) is cst.Attribute and call.func.attr.value in _COLLECTIVES and len(call.args) == 1):
        return None
    only = call.args[0]
    return only.value if only.keyword is None and not only.star else None


_COLLECTIVES = frozenset(["gather", "gather_for_metrics", "pad_across_processes", "all_gather", "all_reduce", "reduce"])


def _lightning_step(name: str, args: list[Value]) -> bool:
    """`module.training_step(batch, batch_idx)`: a LightningModule's step run by a loop the code
    writes itself, which returns the loss with its graph. (HF's `training_step(model, inputs)`,
    handed the network, returns it detached.)"""
    return name == "training_step" and not any(a.module for a in args)


# Verbs of methods that make, load or wrap a network and return it: `prepare_model`, `unwrap_model`.
_MAKES_A_NETWORK = frozenset(["build", "get", "load", "make", "create", "prepare", "wrap", "unwrap", "init", "setup",
                              "compile", "copy", "clone", "to"])  # fmt: skip

# Verbs of methods that do something to a network and return what it did, not its output:
# `learner.update_model(batch)`, `agent.train_model(data)`, `trainer.evaluate_model(loader)`.
_ACTS_ON_A_NETWORK = frozenset(["update", "train", "fit", "optimize", "optimise", "learn", "step", "evaluate",
                                "validate", "test", "save", "export", "sync", "log", "reset", "freeze", "unfreeze"])  # fmt: skip

_PYTHON_NUMBERS = frozenset(["float", "int", "bool", "Number", "numbers.Number", "Real", "numbers.Real"])


def _branch(branch: cst.BaseExpression, test: cst.BaseExpression, taken_when: bool, scope: Scope) -> Value:
    """One branch of `a if test else b`: `x if isinstance(x, float) else x.item()` is a number either
    way; in `v.item() if torch.is_tensor(v) else v`, the `v` of the other branch is no tensor."""
    guarded = tensor_guard(test, scope.imports)
    if guarded is not None and type(branch) is cst.Name and branch.value == guarded[0] and guarded[1] != taken_when:
        return UNKNOWN
    numbered = number_guard(test)
    if numbered is not None and type(branch) is cst.Name and branch.value == numbered[0] and numbered[1] == taken_when:
        return SCALAR
    return evaluate(branch, scope)


def number_guard(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """(name, True) for `isinstance(name, float)`, `isinstance(name, (int, float))`, `type(name) ==
    float`, `type(name) in (int, float)` and the other Python number types, also joined by `or`;
    False under `not`."""
    positive = True
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, positive = test.expression, False
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        # `type(t) == float or type(t) == int`
        left, right = number_guard(test.left), number_guard(test.right)
        return (left[0], positive) if left is not None and left == right and left[1] else None
    tested = _type_tested(test)
    if tested is None:
        return None
    name, kinds = tested
    names = [e.value for e in kinds.elements] if isinstance(kinds, (cst.Tuple, cst.List, cst.Set)) else [kinds]
    if not all(dotted_name(name) in _PYTHON_NUMBERS for name in names):
        return None
    return name, positive


def _type_tested(test: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """The name and the types of `isinstance(name, kinds)`, `type(name) == kind` (or `is`), `type(name) in kinds`."""
    if type(test) is cst.Call and dotted_name(test.func) == "isinstance" and len(test.args) == 2:
        subject, kinds = test.args[0].value, test.args[1].value
    elif (
        type(test) is cst.Comparison
        and len(test.comparisons) == 1
        and type(test.comparisons[0].operator) in (cst.Equal, cst.Is, cst.In)
        and type(test.left) is cst.Call
        and dotted_name(test.left.func) == "type"
        and len(test.left.args) == 1
    ):
        subject, kinds = test.left.args[0].value, test.comparisons[0].comparator
    else:
        return None
    return (subject.value, kinds) if type(subject) is cst.Name else None


def tensor_guard(test: cst.BaseExpression, imports: Imports) -> tuple[str, bool] | None:
    """(name, True) for `isinstance(name, torch.Tensor)`, `torch.is_tensor(name)`,
    `hasattr(name, "detach")` (or `"item"`) or `callable(getattr(name, "detach", None))`; False
    under `not`."""
    positive = True
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, positive = test.expression, False
    if type(test) is cst.Call and dotted_name(test.func) == "callable" and len(test.args) == 1:
        test = test.args[0].value  # `callable(getattr(v, "detach", None))`: as `hasattr(v, "detach")`
    if not (type(test) is cst.Call and test.args and type(test.args[0].value) is cst.Name):
        return None
    name = test.args[0].value.value
    called = imports.qualify(test.func) or dotted_name(test.func) or ""
    if called.endswith("is_tensor"):
        return name, positive
    attribute = string_value(test.args[1].value) if len(test.args) in (2, 3) else None
    if called in ("hasattr", "getattr") and attribute in ("detach", "item"):
        return name, positive
    if called == "isinstance" and len(test.args) == 2:
        kinds = dotted_name(test.args[1].value) or ""
        if kinds.endswith("Tensor"):
            return name, positive
    return None


def _names_the_trained_network(name: str) -> bool:
    """`model`, `net`, `network`: the network a script trains. (A qualified name, `detector_net`,
    `ema_model`, `teacher`, often holds a frozen one; a criterion's output has a graph only when
    its inputs do.)"""
    return name.lower() in ("model", "net", "network")


def _module_output(module: Value, args: list[Value], scope: Scope) -> Value:
    """What calling a module gives: a tensor with a graph, unless grad is off, or the module is
    frozen and its inputs carry none."""
    return Value(tensor=True, graph=scope.grad_enabled and (not module.frozen or any(a.graph for a in args)))


def _is_super(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "super"


def _partial(call: cst.Call, scope: Scope) -> Value:
    """`functools.partial(f, t)`: the function, and a closure over the tensors it binds (the
    partial object holds `t` as a lambda capturing it would). The object's own tensors
    (`weight=self.class_weights`) live as long as it does: binding them keeps nothing more."""
    if not call.args:
        return UNKNOWN
    function = evaluate(call.args[0].value, scope)
    bound = [
        arg.value
        for arg in call.args[1:]
        if evaluate(arg.value, scope).keeps_memory and not _owned_by_self(arg.value, scope)
    ]
    if not bound:
        return function
    named = (b.value if type(b) is cst.Name else cst.Module([]).code_for_node(b) for b in bound)
    captured = tuple(dict.fromkeys((*function.captured, *named)))  # `K=k, ref_K=k` binds one tensor
    return replace(function, closure=function.closure or call, captured=captured)


def _owned_by_self(expr: cst.BaseExpression, scope: Scope) -> bool:
    """`self.scale`, `self.buffers[0]`, `self.norm.weight`: state of the method's own object."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)) and type(expr.value) is not cst.Name:
        expr = expr.value
    return type(expr) is cst.Attribute and scope.attribute_of_self(expr) is not None


# Wrappers whose call runs the wrapped module's own `forward`.
_MODULE_WRAPPERS = frozenset(
    ["torch.compile", "torch.jit.script", "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
     "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"]
)  # fmt: skip


def _qualified_call(call: cst.Call, qualified: str, scope: Scope) -> Value | None:
    namespace, _, last = qualified.rpartition(".")
    if qualified in ("sys.exc_info", "sys.exception"):
        return EXCEPTION  # the traceback and its frames come with it
    if qualified == "torch.device":
        return _device(call, scope)
    if last in ("clip_grad_norm_", "get_total_norm") and namespace.startswith("torch.nn.utils"):
        return TENSOR  # the total norm of the gradients, on their device
    if qualified in ("functools.partial",):
        return _partial(call, scope)
    if qualified == "collections.defaultdict" and call.args and type(factory := call.args[0].value) is cst.Name:
        return scope.local_instance(factory.value, []) or UNKNOWN  # `defaultdict(Meter)`: a Meter per key
    if qualified == "torch.nn.Parameter":
        frozen = argument(call, "requires_grad", 1)
        return TENSOR if type(frozen) is cst.Name and frozen.value == "False" else PARAMETER
    if qualified in _MODULE_WRAPPERS and call.args:
        wrapped = evaluate(call.args[0].value, scope)
        if wrapped.module and wrapped.instance is not None:
            return wrapped  # `model = DDP(model)`: calling it runs the same `forward`
    if is_torch_module_class(qualified):
        # `nn.Softmax(dim=1)(logits)`, `nn.MSELoss()(pred, y)`: a layer without parameters records
        # a graph only from its inputs (logits computed under `no_grad` give probabilities without one).
        parameter_free = last in _PARAMETER_FREE or (last.endswith("Loss") and "WithLoss" not in last)
        return replace(MODULE, frozen=True) if parameter_free else MODULE
    if namespace.startswith("torch.distributions") and last[:1].isupper():
        # `Categorical(logits=out)`: its `log_prob`, `entropy` and `rsample` carry the graph it is given.
        return _derived(_join(evaluate(arg.value, scope) for arg in call.args), scope)
    if qualified == "torch.compile" and call.args:
        # `update = torch.compile(update)` compiles a function: calling it runs that function.
        compiled = call.args[0].value
        if type(compiled) is cst.Name and scope.is_local_function(compiled.value):
            return evaluate(compiled, scope)
    if qualified == "torch.compile" or qualified.startswith(("torchvision.models.", "timm.create_model")):
        return MODULE
    if last == "from_pretrained" and "Model" in qualified:
        return MODULE
    if last.endswith("Tensor") and namespace in ("torch", "torch.cuda"):
        return TENSOR  # torch.FloatTensor(...), torch.cuda.LongTensor(...)
    if namespace in _TENSOR_NAMESPACES and last[:1].islower() and not _torch_non_tensor(last):
        if last in _NO_GRAPH_METHODS:
            return TENSOR  # `torch.argmax(p, 1)`, `torch.bincount(idx)`, `torch.eq(a, b)`: integers or booleans
        if _requires_grad(call):  # a leaf: what is computed from it carries a graph, it has none
            return Value(tensor=True, requires_grad=True, host=last in _FACTORIES and not _given_a_device(call))
        if last in _FACTORIES and not _given_a_device(call):
            return Value(tensor=True, host=True)  # made with no device given: in host memory
        args = _join(evaluate(arg.value, scope) for arg in call.args)
        if last in _TORCH_SHAPED_LIKE:
            args = Value(tensor=True)  # `torch.zeros_like(x)` takes x's shape, not its history
        return _derived(args, scope)
    return None


# torch functions that make a tensor from nothing or from host data: on the host unless given a device.
_FACTORIES = frozenset(
    ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "arange", "linspace", "eye", "rand",
     "randn", "randint", "randperm"]
)  # fmt: skip


def _given_a_device(call: cst.Call) -> bool:
    """`device=` passed (other than `device="cpu"`), or perhaps inside `**factory_kwargs`."""
    device = argument(call, "device")
    return (device is not None and string_value(device) != "cpu") or any(arg.star == "**" for arg in call.args)


def _requires_grad(call: cst.Call) -> bool:
    """`torch.zeros(3, requires_grad=True)`: a leaf, whose results carry a graph."""
    flag = argument(call, "requires_grad")
    return type(flag) is cst.Name and flag.value == "True"


_INTEGER_DTYPES = frozenset(
    ["long", "int", "int64", "int32", "int16", "int8", "uint8", "short", "bool", "LongTensor", "IntTensor",
     "BoolTensor", "ByteTensor"]
)  # fmt: skip


def _integer_dtype(call: cst.Call, scope: Scope) -> bool:
    """`x.to(torch.long)`, `x.to(dtype=torch.int64)`, `x.type(torch.LongTensor)`: an integer or
    boolean result."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value != "dtype":
            continue
        qualified = scope.imports.qualify(arg.value)
        if qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _INTEGER_DTYPES:
            return True
    return False


def _device(call: cst.Call, scope: Scope) -> Value:
    if not call.args:
        return UNKNOWN
    return CUDA if evaluate(call.args[0].value, scope).cuda else UNKNOWN


def _moved(value: Value, name: str, call: cst.Call, scope: Scope) -> Value:
    """The result of tensor method `name`, in host memory after `.cpu()` or `.to("cpu")`, on a
    device after `.cuda()` or `.to(device)` (not after a cast: `.to(torch.float16)`)."""
    if moves_to_the_host(call, scope):
        return replace(value, host=True)
    if name == "cuda" or (name == "to" and not _only_a_dtype(call, scope)):
        return replace(value, host=False)
    return value


def moves_to_the_host(call: cst.Call, scope: Scope) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.to(device)` where `device` names the host."""
    if type(call.func) is not cst.Attribute:
        return False
    name = call.func.attr.value
    return name == "cpu" or (name == "to" and bool(call.args) and names_the_host(call.args[0].value, scope))


def names_the_host(expr: cst.BaseExpression, scope: Scope) -> bool:
    """`"cpu"`, `torch.device("cpu")`, a parameter that defaults to it (`embedding_device="cpu"`)."""
    if type(expr) is cst.Name:
        named = scope.lookup(expr.value)
        return named.host and not named.tensor
    if type(expr) is cst.Call and scope.imports.qualify(expr.func) == "torch.device" and expr.args:
        expr = expr.args[0].value
    return string_value(expr) == "cpu"


def _only_a_dtype(call: cst.Call, scope: Scope) -> bool:
    """`x.to(torch.float16)`, `x.to(dtype=torch.long)`: a cast, which leaves the tensor where it is."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value != "dtype":
            return False
        qualified = scope.imports.qualify(arg.value)
        if arg.keyword is None and (
            qualified is None or not qualified.startswith("torch.") or qualified == "torch.device"
        ):
            return False
    return bool(call.args)


def _method_call(name: str, recv: Value, call: cst.Call, scope: Scope) -> Value | None:
    if name == "requires_grad_" and not recv.tensor and (recv.module or _after_a_module_method(call)):
        # `models.vgg16().eval().requires_grad_(False)`: a frozen network (only modules have `eval()`)
        off = bool(call.args) and literal_bool(call.args[0].value) is False
        return replace(recv if recv.module else MODULE, frozen=off and not scope.turns_gradients_on)
    if recv.module and not recv.tensor:
        if name in _MODULE_RETURNING:
            return recv
        if name in ("parameters", "named_parameters"):
            return TENSOR if recv.frozen else PARAMETER  # what a loop over them gets: its parameters
        if name in ("modules", "children", "named_modules", "named_children"):
            return MODULE  # what a loop over them gets: its submodules
        if name in ("buffers", "named_buffers"):
            return TENSOR
        args = [evaluate(arg.value, scope) for arg in call.args]
        if is_module_forward_method(name) or is_loss_name(name) or _lightning_step(name, args):
            # `model.forward_features(x)`, `model.compute_loss(x, y)`: the module computes them.
            return _module_output(recv, args, scope)
        return UNKNOWN
    if name == "requires_grad_" and recv.tensor and not recv.graph:  # (a module's returns the module)
        # `buf.view(shape).requires_grad_()` makes a leaf of a tensor the code received or
        # gathered (on a tensor with history it changes nothing, and keeps that history).
        off = bool(call.args) and literal_bool(call.args[0].value) is False
        return Value(tensor=True, requires_grad=not off, host=recv.host)
    if recv.tensor:
        key = string_value(call.args[0].value) if name == "get" and call.args else None
        if name in _NON_TENSOR_METHODS or names_a_count(name) or (key is not None and names_a_count(key)):
            return SCALAR  # (`log.get("ntokens", 0)` of a logging output: a count, as `log["ntokens"]` is)
        if name in _NO_GRAPH_METHODS or (name in ("to", "type") and _integer_dtype(call, scope)):
            return _moved(Value(tensor=True, host=recv.host), name, call, scope)  # `.to(torch.long)`: no gradient
        if name.removesuffix("_") in _COMBINING_METHODS:  # `old.mul(m).add(feats)`, `.add_()`: theirs too
            recv = recv.join(_join(evaluate(arg.value, scope) for arg in call.args))
        if name != "cpu" and set(name.lower().split("_")) & _STORABLE_COPY_WORDS:
            # `result.cacheable()`, `out.to_cpu()` of an output object: its class's own method,
            # named for a copy that can be kept (s3prl's detaches and moves to the host). Torch's
            # own `.cpu()` keeps the graph; its `.numpy()` is a number above.
            return UNKNOWN
        return _moved(_derived(recv, scope), name, call, scope)
    if name in ("detach", "detach_", "pin_memory") or (name == "to" and argument(call, "non_blocking") is not None):
        return TENSOR  # only tensors have .detach(); `.to(device, non_blocking=True)` moves a batch
    if name in ("item", "tolist") or name in _SHAPE_METHODS:
        return SCALAR  # `out.size(0) / x.size(0)` of a value not known to be a tensor: a number all the same
    if name in ("values", "items") and recv.graph:
        return _derived(recv, scope)
    return None
