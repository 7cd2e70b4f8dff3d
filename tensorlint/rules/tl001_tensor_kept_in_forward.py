"""TL001: a tensor kept in a container that outlives `forward`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import libcst as cst

from tensorlint.analysis import (
    BACKWARD_CALLS,
    ClassInfo,
    Facts,
    Loop,
    Place,
    Role,
    Store,
    Unit,
    batch_starts,
    bounded_per_call,
    callee_name,
    callees,
    calls_a_network,
    dotted_name,
    handed_on,
    heirs,
    holds_tensors,
    is_loss_name,
    is_metric_class,
    last_statement,
    lineage,
    metric_list_states,
    names_in,
    on_the_device,
    placed,
    receiver,
    references,
    root_name,
    runs_per_batch,
    same_code,
    self_attribute,
    steps_an_optimizer,
    steps_once,
    target_names,
    tensor_keyed,
    walk,
)
from tensorlint.rule import Report, Rule

# Code that runs once per batch: `forward`, hooks, and the per-step methods frameworks call.
REPEATING_ROLES = (Role.FORWARD, Role.MODULE_HOOK, Role.TENSOR_HOOK, Role.STEP)


class TensorKeptInForward(Rule):
    """
    ## What it does
    Checks for tensors stored, in code that runs once per batch, into a container that outlives
    the call and grows with every call. Code that runs once per batch: `forward` (of any class,
    a plain wrapper's too), hooks however they are registered (functions, bound methods of any
    object, callable instances, `functools.partial`, hooks returned by a factory; in a module that
    registers no hook, a function or method that never runs from it and takes a hook's parameters,
    `(module, inp, out)` or `(module, grad_input, grad_output)`: another module registers it), per-step
    methods (`training_step`, `validation_step`, `compute_loss`, metrics' `update`, an evaluator's
    or a metric's `process` (in a class named so, or handed `outputs` or `data_samples`), `__call__`,
    any `*_step` or `*_batch` method (not a private one that its class or a base calls on `self`:
    `_make_beam_step`, called by `step`, is a helper and repeats as its callers do), `on_*_batch_end`, per-iteration hooks such as
    `after_train_iter`, and a module function whose name ends so), a
    method or function of any name that calls `backward()` outside its own loops (a training
    step: the loop that calls it is elsewhere; when the class calls it itself, its caller
    decides; a function nested in another that hands it to a framework's loop, `Engine(update)`,
    rather than calling it), pytorch-ignite's handlers of an iteration event
    (`@trainer.on(Events.ITERATION_COMPLETED)`, `add_event_handler`; `engine.state.output` there
    is what the engine's process function returns), and the methods of `self` they call (a base class's or a mixin's too, whose
    containers are the attributes its subclasses make) or of an object kept on `self` whose class
    the file shows (`self.queue.enqueue(k)` with `self.queue = KeyQueue(...)`). A method that
    stores with its graph is repeated by a loop around its calls even when the loop's function
    made the object: `agent = Agent()`, then `for _ in range(n): agent.update()`; so is one that
    keeps a device tensor, or a copy of one (`self.feats.append(feats.detach())`), or a record of
    them (a dataclass or `NamedTuple` with fields declared `torch.Tensor`: a replay buffer's
    `Transition(state, action, reward, next_state)`; a `namedtuple` type the module makes, also
    built from a `push(self, *args)`'s arguments), when a training loop (one that trains
    itself, or through a function of the file that is one step: a DQN's `optimize_model()`) calls
    it on an object made before it (`bank = Bank()`, then `bank.enqueue(feats)` per
    step; reported at the call when the class is another module's). An attribute that an object
    never sets but another class sets to itself on it (`callback.trainer = self`) is that object:
    a callback's `self.trainer.loss` is what the trainer's `self.loss` holds.
    Growth: `append`, `extend`, `insert`, `+= [h]`, `xs = xs + [h]`, `xs = [*xs, h]`, `d[k] = h` under a key that changes between
    calls (an input, a step, `len(d)`, one drawn anew, `next(self._ids)` or `uuid4()`, an attribute the class only counts up: `self.calls += 1`; for a
    helper's `key` argument, what its callers pass: `self._remember(tuple(ids.tolist()), h)`), `d.setdefault(k, []).append(h)`,
    `self.buf = torch.cat([self.buf, h])`. Containers: attributes of `self` (or of an object an
    attribute holds; a dataclass or attrs field made by `field(default_factory=list)` included;
    reached through a loop variable, `for name, values in self.taps.items(): values.append(h)`,
    or a parameter every call on `self` hands one, `self._keep(self.feats, h)`),
    module-level and enclosing-function lists and dicts, a list on another object that a hook
    appends to (`module.outputs.append(output)` after `layer.outputs = []`), and what a hook's
    registration binds for the hook's life: the arguments of `partial(save, self.outputs)`, the
    parameters of the factory that made it (`make_probe(name, self.events)`).
    A per-step method that keeps a value with its autograd graph is reported even when the
    container is cleared at epoch end: it holds every step's graph until then. So is a
    LightningModule's `training_step` that returns an entry besides `loss` with its graph
    (`{"loss": loss, "logits": logits}`, or such a dict built before and returned by name) when
    the class defines `training_epoch_end`: Lightning
    keeps every step's outputs for that hook, and from 1.6 on detaches only `loss`
    (pytorch-lightning#15514; Lightning 2.0 removed the hook for this reason). A function of the
    file that a loop over batches calls by name is part of that loop: what it appends with a
    graph is TL004's.
    A per-step method or function that keeps a device tensor without its graph (`loss.detach()`,
    a batch's scores, `clip_grad_norm_`'s result, `outputs["loss"]` in Lightning's
    `on_train_batch_end` or in mmengine's `after_train_iter`, what a transformers Trainer's
    `super().prediction_step(...)` returns) is reported when nothing ever empties the list or dict: a global, a
    container its caller made once before all its loops, or an attribute of a meter, callback or
    logger (unless this module makes the object and calls that method on it in a loop: TL014
    judges that loop, and the reset it lacks; a recorder handed to each epoch's function is
    judged here). The caller's container lasts the run when the function trains or is called
    in a loop that trains or in nested loops (epochs, then batches); one evaluation pass that
    gathers its outputs through a helper (`_keep(outputs, logits)`) is judged as the same
    `outputs.append(logits)` written in its loop. So is a device tensor that a per-step method
    or a loop over batches hands to a method of another object that appends it to such a list or dict: reported at the call
    (`self.logger.log_stat("grad_norm", grad_norm, t)` where `Logger.log_stat` keeps every value;
    also through a method that hands it on to one that does, `record(**values)` calling
    `self.add(name, value)`, and on an object a local name holds, `storage = self.storage` or
    `for backend in self.backends:`),
    also when the logger is handed in and its class is in another module of the project, the one
    module that defines a method of that name. A torchmetrics `Metric` whose `update` appends a
    device tensor it computes (a confusion matrix, an error map) to a list state
    (`self.add_state("maps", default=[])`) is reported too: the list keeps every batch's tensor
    until `reset()`. Not its inputs kept as handed (`self.preds.append(preds)`: a ranking metric
    needs them all), nor a metric that moves list states to the host after each update
    (`compute_on_cpu=True`). A list emptied only when the run starts (fastai's `before_fit`, Lightning's
    `on_train_start`) is never emptied while it grows, nor is one emptied only where the hooks
    that `__init__` registered are removed (a recorder's `close()`); one the object's own loop fills
    (`for batch in self.loader: self._evaluate_one(batch)`) holds that evaluation's tensors,
    as Lightning's outputs do, and is not reported; one that a loop outside the object calls (a
    vectorised environment wrapper's `step`, in a rollout function's loop), or the object's own
    training loop (samples kept every few hundred steps), grows for as long as the object lives;
    so does a collector that an object makes once, in `__init__`, and fills in each run of its loop
    (`self.collector.add(out)`). A memo of its inputs that a per-step method keeps on the device (a query
    encoder's `__call__` storing `self._memo[query] = embedding` and handing back the entries
    asked for) is reported: every new key adds a tensor that nothing evicts. (A cache that hands
    back itself, a KV cache's `update`, is working state; one keyed by a shape, a device or a
    setting takes a few values.) A method of any name that appends a value
    with its autograd graph to a list of its object that nothing ever empties is reported too
    (an agent's `act` keeping `dist.log_prob(action)` for a loss it never clears; a buffer's
    `update_priorities(idx, td)` keeping `td`, which it detaches for its own use, so its author
    knows it carries a graph): a method that fills a list runs again and again, and every call's
    graph stays with the list.
    A loop over a loader's batches that moves them to the device and keeps each batch's
    embeddings or features, still on the device, in a list or dict made before it
    (`all_image_features.append(image_features)` in a retrieval evaluation, `self.encoder(x)` in
    an indexer's pass) is reported too: the container holds the whole dataset's vectors in device
    memory when the loop ends. What is kept is named by the container, the names the value is read
    from and the fields read off it (`model(x).last_hidden_state`), not by the inputs handed to the
    network (`model(**features).logits` keeps logits).

    ## Why is this bad?
    `forward` runs once per batch, so the container gains one tensor per batch until the
    process runs out of memory. PyTorch's FAQ: a tensor assigned to a member of an object "will
    not deallocate until the object goes out of scope". Measured on an NVIDIA H200: a
    `self.cache.append(h)` of a 256x4096 activation keeps 4 MiB per call, and so does
    `self.cache.append(h.detach().clone())`: `.detach()` drops the autograd graph but not the
    tensor, so it does not bound the cache. A forward hook that does `acts.append(output)` keeps
    4 MiB per call in the same way. Outside `forward` the same holds for what a step keeps
    without its graph: a detached 64x64 float32 score tensor kept by an evaluation step in a
    list nothing empties adds 16 KiB per call (the verifier, `fixtures/runtime/`). Embeddings
    kept on the device across a loader grow with the data: 512 float32 values per sample are
    2 GiB for a million samples, beside the model (open_clip and sentence-transformers moved
    them to the host with `.cpu()` after out-of-memory reports).

    Not reported: features written into a DGL graph that the call owns (inside `with
    g.local_scope():`, or into `g = g.local_var()`: DGL drops them when the block or the call ends),
    what an object keeps whose holder makes it afresh in a reset (`self.history = HistoryBuffer(n)`
    in an environment's `reset()`, also in another module that imports the class: an episode's
    worth), a tensor that the call sets afresh and then extends (`self.obs = torch.cat((a, b))`,
    then `self.obs = torch.cat((self.obs, c))`) or slides as a window (`torch.cat`, then
    `self.ctx = self.ctx[:, 1:]`),
    containers emptied in the same call on every path (before or after the store)
    or cleared in another method of the class (or of a base class in another module of the
    project, unless the class overrides that method without calling it; a public `clear()` that
    no code of the project calls never runs, and bounds nothing, unless the class has a framework's
    base, such as Lightning's, whose hooks the framework calls) or by the object that owns it
    (`del self.child.feats[:]`, also from another module of the project that names the class:
    `self.unit.history = []` in the model's forward; `if name not in acts: acts[name] = []` only creates a missing
    list, it empties none), a helper's list that every step calling it empties on every path
    (`self._update_losses()` handing the micro-batch losses over and clearing them), keys that
    are the same on every call (`for etype in g.canonical_etypes: self.dist[etype] = d`, a loop
    over `range(...)`, over an attribute of `self`, over `model.named_parameters()` or a state dict's
    names, or the names of what a loss returns, or the strings of a table written in the loop:
    `for name, value in (("emb", emb), ("logits", logits)):`, or in every call that hands the loop
    its table, `self._step(batch, [("l1_loss", F.l1_loss), (self.hparams.loss, fn)])`; a helper's
    key is judged at its calls, inside the loops around them), fields named for text or kinds
    (`batch["file_name"]`, `g.canonical_etypes`), appends capped by a length test (`if len(pool) < size:`),
    a list filled only while a counter the class only counts up is 0 (`if self.timesteps == 0:`),
    `collections.deque(maxlen=N)`, slots of a list replaced (`xs[i] = h`, also of a dict made with an
    entry for each index of a range, `{i: None for i in range(env_num)}`, or of a list held in a
    dict of lists: `self.pipe_buffers["inputs"][buffer_id] = x`, or by an object whose class the
    file does not show, made a list wherever the module assigns it: `frame.ids = [0] * n`), registered buffers
    and parameters written in place, Python numbers (`h.item()`), integer indices that a metric's
    `update` is given under a name that says so (`pred_index_mat`, `token_ids`), the input a
    `forward` writes its output back into and returns (`batch.x = torch.cat([x, batch.x])` in
    `forward(self, batch)`: the caller drops it with the batch), local lists (other than a
    loader's embeddings on the device), what an object keeps that a function makes for one use and
    drops (`step = Step(...)`, then `step.training_step(batch, i)`; a generator's search op, `op =
    _SearchOp(...)`, then `hypotheses = op()`, whose own steps fill its list; not where another
    module makes one too), a write under a
    key that does not change between calls (`self.last["h"] = h`, a `name`, `key` or `layer`
    argument that every caller passes a fixed label, `activation[name] = output` in a hook factory,
    the keys of a dict a loop goes over, `for k, v in infos.items(): self.stats[k] = ...`, also
    one the object keeps in a loop that trains each group in turn, `for group, n in
    self.groups.items()`, unless named for ids: `episode_id`) or takes a few values over a run (a
    setting with a literal default, `keyshift=0`; a size read off an object,
    `context.max_sequence_length`), detached values that a meter,
    metric (other than a torchmetrics list state) or step collects until it is emptied
    (Lightning's `validation_step_outputs` cleared in `on_validation_epoch_end`, a meter made
    afresh each epoch, a dict the loop makes at the top of each epoch, a dict of lists that a
    method running once per step makes and hands to its per-minibatch helper, then reduces and
    drops: PPO's `update`) or keeps in host memory
    (`.cpu()`, `torch.zeros(n)` made without a
    device), and containers whose kind the file does not show. Across a loader's batches, not
    reported: logits, predictions, indices, counts, losses and labels that an evaluation collects
    (a few numbers per sample), outputs moved to the host (`.cpu()`, also `.cpu().data` or
    `.cpu().detach()`, or `.to(embedding_device)` where that parameter defaults to `"cpu"`: where
    the rows live is the caller's choice), a buffer emptied in the loop (a
    window written out every few batches), loops that never move their batches to a device, loops
    that leave once they have collected enough (`if len(images) >= n: break`), the batches
    themselves moved to the device (`xs.extend(list(x.to(device)))`), and loops over something
    else (a batch's prompts or views: they build one batch's result).

    ## Example
    ```python
    class Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1024, 4096)
            self.features = []

        def forward(self, x):
            h = self.fc(x)
            self.features.append(h.detach())  # grows by 4 MiB every call
            return h
    ```

    Use instead:
    ```python
    class Recorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1024, 4096)
            self.features = collections.deque(maxlen=8)  # or clear it once per step

        def forward(self, x):
            h = self.fc(x)
            self.features.append(h.detach().cpu())
            return h
    ```

    ## Fix safety
    No automatic fix: bounding or clearing a cache changes what the program keeps, and only
    its author knows how much of the history is needed.

    ## References
    - [PyTorch FAQ: Don't hold onto tensors and variables you don't need](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [torch.nn.Module.register_forward_hook](https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook)
    """

    code = "TL001"
    name = "tensor-kept-in-forward"
    summary = "Tensor stored in a container that outlives `forward` and grows every call"
    grows_over_a_run = True
    invalid = (
        """
        from torch import nn

        class Cache(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.cache = []

            def forward(self, x):
                h = self.fc(x)
                self.cache.append(h.detach().clone())
                return h
        """,
        """
        import torch

        activations = []

        def save(module, inputs, output):
            activations.append(output)

        model = torch.nn.Linear(4, 4)
        model.register_forward_hook(save)
        """,
    )
    valid = (
        """
        from torch import nn

        class Features(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

            def forward(self, x):
                self.features = []
                for block in self.blocks:
                    x = block(x)
                    self.features.append(x)
                return x
        """,
        """
        import collections
        from torch import nn

        class Recent(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.recent = collections.deque(maxlen=4)
                self.norms = []

            def forward(self, x):
                h = self.fc(x)
                self.recent.append(h.detach())
                self.norms.append(h.norm().item())
                return h
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        for store in facts.stores:
            role = next((r for r in REPEATING_ROLES if r in store.unit.roles), None)
            if role is None:
                if _graph_kept_by_a_method(facts, store):
                    yield Report(store.node, _graph_kept_message(store))
                elif (loop := _outputs_kept_on_device(facts, store)) is not None:
                    yield Report(store.node, _outputs_kept_message(store, loop))
                elif _kept_by_a_helper_across_a_loop(facts, store):
                    yield Report(store.node, _kept_for_the_run_message(store, "iteration of its loop", None))
                continue
            if not store.value.tensor or not store.grows or bounded_per_call(facts, store) or _trimmed(store):
                continue
            if runs_per_batch(store.unit) and store.value.graph:
                continue  # a function a loop over batches calls: the loop's history, TL004's
            if role is Role.STEP and (state := _metric_list_state(facts, store)) is not None:
                yield Report(store.node, _list_state_message(store, state))
                continue
            if tensor_keyed(facts, store):
                continue  # keyed by a tensor: TL015 reports it, with the cause
            lifetime, kind = facts.container_kind(store.unit, store.container)
            if type(store.node) is cst.Assign and type(store.container) is cst.Name and lifetime == "attribute":
                continue  # `x = torch.cat([x, t])` after `x = self.x` on another path binds the name anew
            if lifetime == "argument" and _made_each_step(facts, store):
                continue  # made afresh by a caller that runs once per step: it lives for that step
            # A collector that keeps device tensors and is never emptied grows for the whole run.
            kept_for_the_run = (
                role is Role.STEP and not store.value.graph and _kept_for_the_run(facts, store, lifetime, kind)
            )
            of_a_module = store.unit.cls is not None and store.unit.cls.is_module
            if role is Role.STEP and not store.value.graph and not of_a_module and not kept_for_the_run:
                continue  # a meter or metric collects detached values by design, for as long as it lives
            memo = kind == "dict" and store.grows  # an entry per key, the keys new every call
            if role is Role.STEP and root_name(store.container) in facts.returned.get(id(store.unit), ()) and not memo:
                continue  # a cache that hands back what it keeps (a KV cache's `update`): working state
            if lifetime == "local" or _object_of_one_call(facts, store):
                continue
            if lifetime == "attribute" and store.unit.cls is not None and facts.made_afresh_by_a_reset(store.unit.cls):
                continue  # an object of one episode
            # A per-step method's graphs stay alive until the container is cleared (an epoch).
            graphs_until_cleared = kind == "managed" and role is Role.STEP and store.value.graph
            grows = kind in ("list", "dict") or (store.concatenates and kind in (None, "tensor")) or store.for_the_run
            if not (grows or graphs_until_cleared):
                continue
            why = store.unit.roles[role]
            where = f"of a hook {why}" if role in (Role.MODULE_HOOK, Role.TENSOR_HOOK) else f"of {why}"
            name = root_name(store.container)  # `self.stats` for self.stats["float"].append(y)
            container = f"`{name}`" if name else "a container"
            if kept_for_the_run:
                owner = store.unit.cls if lifetime == "attribute" and not store.for_the_run else None
                message = _kept_for_the_run_message(store, f"call {where}", owner)
            elif graphs_until_cleared:
                message = (
                    f"{container} keeps the autograd graph of every call {where} until it is cleared: "
                    "each step's activations stay alive until then; store `.detach()` (or `.item()`)"
                )
            else:
                what = "the autograd graph and " if store.value.graph and role is Role.STEP else ""
                each = _each_time(store, "each call")
                every = "for every new key of a call" if each != "each call" else "from every call"
                message = (
                    f"{container} keeps {what}a tensor {every} {where}: it grows by the tensor's "
                    f"size {each} (`.detach()` does not bound it); clear it each step or use "
                    "`deque(maxlen=...)`"
                )
            yield Report(store.node, message)
        for output in facts.epoch_outputs:
            yield Report(output.node, _epoch_output_message(output))


def _trimmed(store: Store) -> bool:
    """`self.ctx = torch.cat((self.ctx, ids))`, then `self.ctx = self.ctx[:, 1:]` in the same
    function: a window that the call slides, not a tensor that grows."""
    if not store.concatenates:
        return False
    return any(
        type(assign.value) is cst.Subscript
        and same_code(assign.value.value, store.container)
        and any(type(element.slice) is cst.Slice for element in assign.value.slice)
        and any(same_code(target.target, store.container) for target in assign.targets)
        for assign, _ in placed(store.unit, cst.Assign)
    )


def _graph_kept_by_a_method(facts: Facts, store: Store) -> bool:
    """A method of no known role that appends a value with its autograd graph to a list (or a dict
    of lists) of its object that nothing ever empties (`self.log_probs.append(dist.log_prob(a))` in
    an agent's `act`, or in the helper it calls to do it; `self._values[key].append(v)` in a
    tracker's `record`): a method that fills a list runs again and again, and every call's graph stays."""
    unit = store.unit
    if not (unit.is_method and unit.name != "__init__" and store.value.graph and store.grows) or unit.roles:
        return False
    if store.value.module:
        return False  # a network (`self.teachers.append(policy)`) holds parameters, not a call's history
    if runs_per_batch(unit) or bounded_per_call(facts, store) or facts.runs_only_while_built(unit):
        return False  # (filled once, while `__init__` builds the object)
    if any(loop.feeds_data or loop.calls_backward for loop in store.loops):
        return False  # the loop over batches around it repeats it: TL004's
    return facts.container_kind(unit, store.container) in (("attribute", "list"), ("attribute", "dict"))


def _graph_kept_message(store: Store) -> str:
    name = root_name(store.container)
    unit = store.unit
    where = f"`{unit.cls.name}.{unit.name}`" if unit.cls else f"`{unit.name}`"
    return (
        f"`{name}` keeps the autograd graph of every call of {where} and nothing empties it: each "
        "call's activations stay alive for as long as the object lives; store `.detach()` (or "
        "`.item()`), or empty the list after the backward pass that uses it"
    )


def _outputs_kept_on_device(facts: Facts, store: Store) -> Loop | None:
    """The loop over a loader whose every batch adds a network's output, still on the device, to a
    container made before it (`all_features.append(model(images))` under `no_grad`): the
    container holds the whole dataset's outputs in device memory by the time the loop ends."""
    value = store.value
    if not store.grows or value.graph or not value.tensor or value.host or value.scalar or value.module:
        return None  # (a graph is TL004's: it keeps the activations too)
    if value.instance is not None or tensor_keyed(facts, store):
        return None  # (not `bounded_per_call`: a list made afresh in the call still grows across its loop)
    root = root_name(store.container)
    # A loop over a loader's batches: a loop over a batch's prompts or views builds one batch's
    # result, and one over an array batched by hand (`range(0, n, bs)`) most often builds a
    # matrix used on the device next (BLIP's text embeddings for its similarity matrix).
    loop = next((loop for loop in reversed(store.loops) if loop.feeds_data and not _batched_by_hand(loop)), None)
    if root is None or loop is None or any(root in inner.assigned for inner in store.loops[store.loops.index(loop) :]):
        return None  # made afresh in the loop: one batch's, or a window that is emptied
    kind = facts.container_kind(store.unit, store.container)[1]
    slot = type(store.node) is cst.Assign and any(type(t.target) is cst.Subscript for t in store.node.targets)
    if kind not in ("list", "dict") and not (kind == "tensor" and not slot):
        return None  # (`all_embeddings = torch.stack(all_embeddings)` after the loop: a list until then)
    if _emptied_in(loop.node, root) or not _moves_to_device(loop.node):
        return None  # emptied as it goes, or nothing shows the batches leave the host
    if _stops_when_full(loop.node):
        return None  # `if len(images) >= n: break`: n examples, not the dataset
    if not any(word in name.lower() for name in (root, *_kept_names(store.value_expr)) for word in _FEATURE_WORDS):
        return None  # logits or predictions of an evaluation set: a few numbers per sample
    return loop if _network_output(store, loop) else None


def _kept_names(expr: cst.BaseExpression) -> set[str]:
    """The names a kept value is read from and the fields read off it (`outputs.hidden_states`,
    `model(x).last_hidden_state`), not the inputs handed to a network called by its name
    (`model(**features).logits` keeps logits, not the tokenizer's `features`)."""
    inputs = [
        arg.value
        for call in [expr, *walk(expr)]
        if type(call) is cst.Call and calls_a_network(call)
        for arg in call.args
    ]
    handed = set().union(*(references(value) for value in inputs))
    inside = {id(node) for value in inputs for node in [value, *walk(value)]}
    fields = {node.attr.value for node in [expr, *walk(expr)] if type(node) is cst.Attribute and id(node) not in inside}
    return (references(expr) - handed) | fields


def _batched_by_hand(loop: Loop) -> bool:
    return type(loop.node) is cst.For and batch_starts(loop.node.iter)


# Per-sample vectors, which a whole dataset's worth of does not fit beside a model: embeddings and
# features for retrieval or clustering (`all_image_features`, `encode_text(...)`, `hidden_states`).
_FEATURE_WORDS = ("feat", "emb", "encod", "hidden", "latent", "repr")


def _network_output(store: Store, loop: Loop) -> bool:
    """Whether the stored value is computed in the loop from the batch, at full size: what a call
    makes of it (`model(images)`, a field or item of that, an elementwise op on it), not the batch
    itself moved or reshaped (`labels.to(device)`); not a reduction, an index or a count
    (`out.argmax(1)`, `loss.mean()`, `(pred == y).sum()`), a copy on the host, nor a loss."""
    seen: set[str] = set()
    todo: list[cst.BaseExpression] = [store.value_expr]
    while todo:
        expr = todo.pop()
        if isinstance(expr, (cst.Tuple, cst.List, cst.Dict)):  # `(feats, ids)`, `{"emb": e}`: each entry
            todo.extend(e.value for e in expr.elements if isinstance(e, (cst.Element, cst.DictElement)))
            continue
        if _cheap_to_keep(expr):
            continue
        for node in [expr, *walk(expr)]:
            if type(node) is cst.Call and callee_name(node) not in _NOT_COMPUTING:
                head = node.func.value if type(node.func) is cst.Attribute else node.func
                return not (type(head) is cst.Name and is_loss_name(head.value))  # `criterion(out, y)`
            if type(node) is cst.Name and node.value in loop.assigned and node.value not in seen:
                if is_loss_name(node.value):
                    return False
                seen.add(node.value)
                todo.extend(_values_assigned(loop.node, node.value))
    return False


# Calls that move, reshape or unpack a batch (or fetch it), computing nothing from it.
_NOT_COMPUTING = frozenset(
    [
        *("to", "cuda", "float", "half", "double", "bfloat16", "type", "contiguous", "view", "reshape", "flatten"),
        *("squeeze", "unsqueeze", "permute", "transpose", "clone", "detach", "pin_memory", "next", "iter", "len"),
        *("list", "tuple", "unbind", "split", "chunk"),  # the batch itself, in rows or pieces
    ]
)


def _values_assigned(loop: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """What the loop assigns to `name`, unpacked or not (`feats, _ = model(x)` assigns `model(x)`),
    or iterates it over (`for emb in embeddings`)."""
    found = []
    for node in walk(loop):
        if type(node) is cst.Assign and any(name in target_names(t.target) for t in node.targets):
            found.append(node.value)
        elif type(node) is cst.For and name in target_names(node.target):
            found.append(node.iter)  # `for emb in embeddings`: a row of what the loop computed
    return found


def _cheap_to_keep(expr: cst.BaseExpression) -> bool:
    """`out.argmax(1)`, `loss.mean()`, `(pred == y).sum()`, `logits.max(1)[1]`: a batch reduced
    to indices, counts or a number, whose keeping costs little; or a copy on the host (`.cpu()`,
    and `.cpu().data` or `.cpu().detach()`, which keep it where it is)."""
    while True:
        if type(expr) is cst.Subscript or (type(expr) is cst.Attribute and expr.attr.value == "data"):
            expr = expr.value
        elif type(expr) is cst.Call and callee_name(expr) in _KEEPS_PLACE and (kept := receiver(expr)) is not None:
            expr = kept
        else:
            break
    if type(expr) is cst.Comparison:
        return True
    if type(expr) is cst.Call and callee_name(expr) == "to" and any("cpu" in _code(a.value) for a in expr.args):
        return True  # `.to("cpu")`, `.to(device="cpu")`
    return type(expr) is cst.Call and callee_name(expr) in _CHEAP


# Methods that give the same data, of the same size, where it was (unlike `_SAME_DATA`: no `.to`).
_KEEPS_PLACE = frozenset(["detach", "clone", "contiguous"])
_CHEAP = frozenset(
    [
        *("cpu", "numpy", "argmax", "argmin", "max", "min", "sum", "mean", "std", "var", "norm", "item", "tolist"),
        *("long", "int", "bool", "eq", "ne", "gt", "lt", "ge", "le", "numel", "size", "all", "any", "topk", "sort"),
        "count_nonzero",
    ]
)


def _emptied_in(loop: cst.CSTNode, root: str) -> bool:
    """`buf.clear()` or `del buf[:]` in the loop: a window emptied as it fills."""
    for node in walk(loop):
        emptied = receiver(node) if type(node) is cst.Call and callee_name(node) == "clear" else None
        if emptied is not None and dotted_name(emptied) == root:
            return True
        if type(node) is cst.Del and root in references(node):
            return True
    return False


def _stops_when_full(loop: cst.For | cst.While) -> bool:
    """The loop leaves once a collection is long enough: `if len(images) >= n: break` (its own
    `break`, not an inner loop's)."""
    inner = {id(n) for node in walk(loop.body) if type(node) in (cst.For, cst.While) for n in walk(node)}
    for node in walk(loop.body):
        if type(node) is not cst.If or id(node) in inner or type(node.body) is not cst.IndentedBlock:
            continue
        leaves = type(last_statement(node.body)) is cst.Break
        if leaves and any(type(n) is cst.Call and callee_name(n) == "len" for n in walk(node.test)):
            return True
    return False


def _moves_to_device(loop: cst.CSTNode) -> bool:
    """The loop moves its batches to an accelerator: `.cuda()`, `.to(device)`, `batch_to_device(...)`."""
    for call in walk(loop):
        if type(call) is not cst.Call:
            continue
        name = callee_name(call) or ""
        if name == "cuda" or "device" in name.lower():
            return True
        if name == "to" and any("device" in text or "cuda" in text for text in map(_code, call.args)):
            return True
    return False


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node).lower()


def _outputs_kept_message(store: Store, loop: Loop) -> str:
    name = root_name(store.container)
    iterated = _code(loop.node.iter) if type(loop.node) is cst.For else "data"
    value = cst.Module([]).code_for_node(store.value_expr)
    return (
        f"`{name}` keeps every iteration's `{value}` in device memory until the loop over `{iterated}` ends: "
        "it grows with the size of the data, and a large dataset runs out of device memory; "
        "keep `.cpu()` copies (or reduce each one)"
    )


def _kept_for_the_run(facts: Facts, store: Store, lifetime: str, kind: str | None) -> bool:
    """A tensor on the device, kept in a list or dict that nothing empties: a global, a container
    the caller made once before its loops, or an attribute of an object (unless this module makes
    it and calls the method on it in a loop: TL014 judges that loop, and the reset it lacks; or the
    object's own loop calls it, keeping a batch's tensors until its evaluation ends)."""
    value = store.value
    if not value.tensor or value.host or value.scalar or not _holds_only_tensors(facts, value.instance):
        return False  # (a record of the project, `SubgraphInfo(...)`, may hold anything)
    if store.for_the_run:
        return True  # a helper keeps it, in a list or dict that nothing empties
    if store.concatenates and kind in (None, "tensor") and lifetime == "attribute":
        kind = "list"  # `self.buf = torch.cat([self.buf, x])`: it keeps every item, as a list does
    if kind not in ("list", "dict"):
        return False
    if lifetime == "attribute":
        cls = store.unit.cls
        if cls is None or _run_by_own_loop(facts, store.unit, cls):
            return False  # called by its object's own loop: kept for that evaluation, as Lightning's outputs are
        return not _updated_in_a_loop_where_made(facts, cls.name, store.unit.name)
    if lifetime == "argument":
        handed, caller, passed = _container_maker(store)
        if passed in facts.index.concatenated:
            return False  # the caller joins them into one tensor after its loop: one pass's outputs
        if not _spans_the_run(handed, caller):
            return False  # one pass over the data, as the caller's own `append` would be: judged as that
        return not any(
            place.loops and passed in target_names(assign.targets[0].target)
            for assign, place in placed(caller, cst.Assign)
        )
    return lifetime == "global"


def _holds_only_tensors(facts: Facts, instance: str | None) -> bool:
    """No instance, or one of a record whose fields are declared tensors (`Transition(state, action,
    reward, next_state)` with `state: torch.Tensor`): it keeps the tensors it is built from."""
    known = facts.class_of(instance) if instance is not None else None
    return instance is None or (known is not None and holds_tensors(known[1]))


def _run_by_own_loop(facts: Facts, unit: Unit, cls: ClassInfo) -> bool:
    """Whether a loop over batches in a method of the object's own class runs the method, directly
    or through the methods calling it: an evaluation, whose collections last as long as it. A loop
    outside the object (`env.step(action)` in a function's rollout) calls it for as long as the
    object lives, and so does the object's own training loop (the samples it keeps every so many
    steps pile up for the whole run)."""
    own = lineage(facts.index.classes, cls)
    seen, todo = {id(unit)}, [unit]
    while todo:
        current = todo.pop()
        for call, caller in current.call_sites:
            if current.called_per_batch and (caller.cls is None or caller.cls not in own):
                continue  # the loop is outside the object
            if current.called_per_batch and not _called_in_training(facts, caller, call):
                return True
            if id(caller) not in seen:
                seen.add(id(caller))
                todo.append(caller)
    return False


def _called_in_training(facts: Facts, caller: Unit, call: cst.Call) -> bool:
    """Whether a loop around the call trains (`backward()`, an optimizer's step)."""
    return any(
        _trains(facts, caller, loop) for node, place in placed(caller, cst.Call) if node is call for loop in place.loops
    )


def _made_each_step(facts: Facts, store: Store) -> bool:
    """A container handed in that the function making it makes afresh on each of its calls, where
    that function runs once per step (PPO's `update`, once per rollout, gathering its minibatches'
    metrics) and lets the container die with the call: it lives for that step's passes only. Not
    one the maker returns or keeps (`return metrics`, `self.log.append(metrics)`), nor one whose
    maker is told how long to run (`for _ in range(num_epochs)`: a whole training, whatever its name)."""
    handed, maker, name = _container_maker(store)
    # (`__call__` runs whatever the object does: a trainer's, its whole training)
    repeats = maker.called_per_batch or (bool(maker.roles) and maker.name != "__call__")
    if not repeats or facts.container_kind(maker, cst.Name(name))[0] != "local":
        return False
    return not (handed_on(maker, name) or _kept_by(facts, maker, name) or _told_how_long(maker, handed))


def _kept_by(facts: Facts, unit: Unit, name: str) -> bool:
    """Whether the function puts the container into another one (`self.log.append(metrics)`,
    `self.log += [(step, metrics)]`)."""
    return any(store.unit is unit and name in names_in(store.value_expr) for store in facts.stores)


def _told_how_long(maker: Unit, handed: Unit) -> bool:
    """Whether a loop around a call of `handed` in `maker` counts what the maker was given
    (`for _ in range(num_epochs)`)."""
    params = {p.name.value for p in maker.params}
    sites = {id(call) for call, caller in handed.call_sites if caller is maker}
    return any(
        type(loop) is cst.For and type(loop.iter) is cst.Call and callee_name(loop.iter) == "range"
        and any(type(a.value) is cst.Name and a.value.value in params for a in loop.iter.args)
        for call, place in placed(maker, cst.Call) if id(call) in sites for loop in place.loops
    )  # fmt: skip


def _container_maker(store: Store) -> tuple[Unit, Unit, str]:
    """For a container the function was handed, the function that makes it, the one it hands it
    to (the store's function, or the helper that hands it on: `self._keep(metrics, loss)` in the
    per-batch step) and its name there."""
    handed = store.unit
    maker, name = handed.given_containers[root_name(store.container) or ""]
    seen = {id(handed)}
    while name in maker.given_containers and id(maker) not in seen:
        seen.add(id(maker))
        handed, (maker, name) = maker, maker.given_containers[name]
    return handed, maker, name


def _spans_the_run(unit: Unit, caller: Unit) -> bool:
    """Whether the calls that hand `unit` the caller's container repeat for a whole run, not one
    pass over the data: `unit` trains (`loss.backward()`), or a call sits in a loop that trains or
    in a loop inside another (epochs, then batches). An evaluation that gathers one pass's outputs
    through a helper (`_keep(outputs, logits)`) is judged as the same `append` written inline."""
    if _calls_backward(unit.node):
        return True
    sites = {id(call) for call, site_caller in unit.call_sites if site_caller is caller}
    return any(
        len(place.loops) > 1 or _calls_backward(place.loops[-1])
        for call, place in placed(caller, cst.Call)
        if id(call) in sites and place.loops
    )


def _calls_backward(node: cst.CSTNode) -> bool:
    return any(type(n) is cst.Call and callee_name(n) in BACKWARD_CALLS for n in walk(node, into_functions=False))


def _metric_list_state(facts: Facts, store: Store) -> str | None:
    """`self.matrices.append(counts)` in a torchmetrics `Metric`'s `update`, onto a list state
    (`add_state("matrices", default=[])`), of a device tensor without its graph (one with it is
    kept the same way, and reported as such below) that `update` computes: a per-batch count or
    error a sum state could hold. Not the inputs kept as they are handed in (`preds`, `target`,
    `item["boxes"]` of each): a ranking metric (AUROC, mAP) needs every one; nor when the metric
    moves its list states to the host after each update (`compute_on_cpu=True`)."""
    cls = store.unit.cls
    if cls is None or store.value.graph or not on_the_device(store.value):
        return None
    if store.unit.name == "update" and _as_handed(store.unit, store.value_expr):
        return None  # (in a helper `update` calls, its parameters may hold what `update` computed)
    classes = facts.index.classes
    attribute = self_attribute(store.unit, store.container)
    if attribute is None or not is_metric_class(classes, cls) or attribute not in metric_list_states(classes, cls):
        return None
    on_cpu = (
        type(node) is cst.Arg
        and node.keyword is not None
        and node.keyword.value == "compute_on_cpu"
        and not (type(node.value) is cst.Name and node.value.value == "False")
        for info in lineage(classes, cls)
        for method in info.methods.values()
        for node in walk(method)
    )
    return None if any(on_cpu) else attribute


# Methods that give the tensor they are called on, or a view or copy of it.
_SAME_DATA = frozenset(["detach", "float", "long", "int", "flatten", "view", "reshape", "squeeze", "unsqueeze", "to"])


def _as_handed(unit: Unit, expr: cst.BaseExpression) -> bool:
    """A parameter of the method, an item or field of one, a loop variable over one, or such a
    value converted or reshaped (`preds.detach().flatten()`); a display holds only such values."""
    if isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
        return all(_as_handed(unit, element.value) for element in expr.elements)
    if type(expr) is cst.Dict and expr.elements:
        return all(type(e) is cst.DictElement and _as_handed(unit, e.value) for e in expr.elements)
    while True:
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            expr = expr.value
        elif type(expr) is cst.Call and callee_name(expr) in _SAME_DATA and receiver(expr) is not None:
            expr = cast(cst.BaseExpression, receiver(expr))
        else:
            break
    if type(expr) is not cst.Name:
        return False
    if expr.value in {p.name.value for p in unit.argument_params}:
        return True
    return any(
        expr.value in target_names(loop.target) and _as_handed(unit, loop.iter) for loop, _ in placed(unit, cst.For)
    )


def _list_state_message(store: Store, state: str) -> str:
    method = f"{store.unit.cls.name}.{store.unit.name}" if store.unit.cls else store.unit.name
    return (
        f"`self.{state}` is a list state of a torchmetrics `Metric`: every call of `{method}` "
        "appends a device tensor that stays until "
        "`reset()`, so device memory grows with every batch of the epoch (of the run, if nothing resets it); "
        'keep a sum state (`default=torch.zeros(...)`, `dist_reduce_fx="sum"`) where the metric allows it, '
        "or pass `compute_on_cpu=True`"
    )


def _kept_by_a_helper_across_a_loop(facts: Facts, store: Store) -> bool:
    """`logger.log_stat(k, score, step)` in a loop over batches, on a logger that outlives the
    function, or `bank.enqueue(feats)` in a training loop on a bank made before it, whose method
    appends it (or a copy) to a list nothing empties: it grows for as long as the loop runs."""
    if not store.for_the_run:
        return False
    if facts.container_kind(store.unit, store.container)[0] != "local":
        return any(loop.feeds_data for loop in store.loops)
    made = (root_name(store.container) or "").split(".")[0]
    return any(loop.calls_backward and made not in loop.assigned for loop in store.loops)


def _kept_for_the_run_message(store: Store, every: str, owner: ClassInfo | None) -> str:
    """`every`: "call of `Learner.train` (...)"; `owner`: the class whose attribute keeps it."""
    until = f"as long as its `{owner.name}` lives" if owner is not None else "the whole run"
    grows = f"device memory grows by the tensor's size {_each_time(store, 'every step')}, for {until}"
    if store.via:  # a helper keeps it: reported at the call that hands it over
        call = cst.Module([]).code_for_node(store.node)
        return f"`{call}` keeps a device tensor from every {every}: {store.via}; {grows}; pass `.item()` or `.cpu()`"
    name = root_name(store.container)
    container = f"`{name}`" if name else "a container"
    return (
        f"{container} keeps a device tensor from every {every} and nothing empties it: {grows}; "
        "store `.item()` or `.cpu()`, or empty it once per epoch"
    )


def _each_time(store: Store, otherwise: str) -> str:
    """How often the container grows: under a key that a call brings anew (a memo of its inputs,
    `self._memo[key] = out` after `if key in self._memo: return ...`), with every new key."""
    return "with every new key" if store.key is not None and type(store.node) is cst.Assign else otherwise


_METER_UPDATES = frozenset(["update", "forward", "__call__"])


def _updated_in_a_loop_where_made(facts: Facts, class_name: str, method: str) -> bool:
    """Whether a loop calls `x.method(...)` (`bank.update(emb)` per batch) on an object the code
    shows being made (`x = Bank()`, `self.x = Bank()`): TL014 judges that loop, and the reset it
    lacks; a loop of one evaluation keeps what it is given for that evaluation. (An object a
    function is handed, `recorder.update(d)`, is judged here; so is a training loop calling another
    method than a meter's `update`, `bank.enqueue(feats)`, and a loop calling such a method on an
    object made once with its holder, `self.collector.add(out)` in each `run()`: TL014 judges neither.)"""
    meter = method in _METER_UPDATES
    for unit in facts.index.units:
        for call, place in placed(unit, cst.Call):
            func = call.func
            if not place.loops or type(func) is not cst.Attribute or func.attr.value != method:
                continue
            if not meter and any(_trains(facts, unit, loop) for loop in place.loops):
                continue
            attribute = self_attribute(unit, func.value)
            if attribute is not None and unit.cls is not None:
                assigned = [
                    pair
                    for c in lineage(facts.index.classes, unit.cls)
                    for pair in c.attribute_values.get(attribute, [])
                ]
                if not meter and all(maker.name == "__init__" for _, maker in assigned):
                    continue  # made once with its holder and filled by each run of its loop: TL014 judges none
                made = [v for v, _ in assigned]
            elif type(func.value) is cst.Name:
                made = unit.lookup_bindings(func.value.value)
            else:
                continue
            if any(type(v) is cst.Call and dotted_name(v.func) == class_name for v in made):
                return True
    return False


def _object_of_one_call(facts: Facts, store: Store) -> bool:
    """Whether every call of the storing method in the file is on an object that the calling
    function made itself (`step = Step(...)`, then `step.training_step(batch, i)` in its loop), or
    on `self` in the class's own methods where every object of the class is made for one use
    (`_made_for_one_call`): the object, and what its attributes keep, goes when that call
    returns. Not for a graph kept by
    calls in a loop around which the object was made (`agent = Agent()`, then `for _ in
    range(n): agent.update()`): each iteration's graph stays until the loop ends, as it would
    in a list of the function's own; nor for device tensors kept by calls in a training loop
    around which it was made (`bank = Bank()`, then `bank.enqueue(feats)` per batch): they stay
    for the whole training."""
    unit, cls = store.unit, store.unit.cls
    if cls is None or not unit.is_method:
        return False
    family: list[ClassInfo] = []  # the class and its heirs, when first needed
    found = internal = False
    for caller in facts.index.units:
        for call, place in placed(caller, cst.Call):
            func = call.func
            if type(func) is not cst.Attribute or func.attr.value != unit.name:
                continue
            owner = func.value
            if type(owner) is cst.Name and owner.value == caller.self_name and caller.cls is not None:
                family = family or [cls, *heirs(facts.index.classes, cls)]
                if caller.cls in family:
                    internal = True  # the object's own call: how long it lives is how long the object does
                    continue
            if type(owner) is not cst.Name:
                return False
            made = caller.bindings.get(owner.value, [])
            if not made or not all(type(v) is cst.Call and dotted_name(v.func) == cls.name for v in made):
                return False
            if owner.value in facts.returned.get(id(caller), ()):
                return False  # handed back to the caller's caller: it lives on
            around = [loop for loop in place.loops if not any(v is n for v in made for n in walk(loop))]
            if around and (store.value.graph or any(_trains(facts, caller, loop) for loop in around)):
                return False
            found = True
    return found or (internal and _made_for_one_call(facts, {c.name for c in family}))


def _made_for_one_call(facts: Facts, family: set[str]) -> bool:
    """Whether every object of these classes is made by a function of the file for one use and
    dropped (`op = _SamplingOp(...)`, then `hypotheses = op()`): bound to a name that is only
    called, or whose methods are, in the loops it was made in (not made before a loop that calls
    it), and neither returned, stored, nor handed on; and no other module of the project makes one.
    Whatever its methods keep on it goes with it."""
    made = False
    for made_call, caller in (pair for name in family for pair in facts.index.named_calls.get(name, [])):
        uses = {id(call): place for call, place in placed(caller, cst.Call)}
        name = _bound_only_to(caller, made_call)
        if name is None or id(made_call) not in uses or not _only_called(caller, name, uses[id(made_call)], uses):
            return False
        made = True
    project = facts.project
    return made and not (
        project is not None and facts.path is not None and any(project.called_elsewhere(facts.path, c) for c in family)
    )


def _bound_only_to(caller: Unit, made: cst.Call) -> str | None:
    """The name that `name = Cls(...)` binds the new object to, if that is the whole statement."""
    for assign, _ in placed(caller, cst.Assign):
        if assign.value is made and len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name:
            return assign.targets[0].target.value
    return None


def _only_called(caller: Unit, name: str, made_at: Place, uses: dict[int, Place]) -> bool:
    """Whether every other read of `name` in the caller calls it or one of its methods, in the
    loops the object was made in."""
    reads = [node for node in walk(caller.node) if type(node) is cst.Name and node.value == name]
    calls = [call for call in walk(caller.node) if type(call) is cst.Call and _calls_on(call, name)]
    if len(reads) != len(calls) + 1:  # the binding itself, and the calls: nothing else
        return False
    return all(id(call) in uses and uses[id(call)].loops == made_at.loops for call in calls)


def _calls_on(call: cst.Call, name: str) -> bool:
    """`op()` or `op.step()`: a call of the object held by `name`, or of one of its methods."""
    called = call.func if type(call.func) is cst.Name else receiver(call)
    return type(called) is cst.Name and called.value == name


def _trains(facts: Facts, unit: Unit, loop: cst.CSTNode) -> bool:
    """A loop of `unit` whose body backpropagates or steps an optimizer, itself or through a function
    of the module that is one training step (a DQN's `optimize_model()`): it runs for the whole training."""
    calls = [n for n in walk(loop) if type(n) is cst.Call]
    if any(callee_name(call) in BACKWARD_CALLS or steps_an_optimizer(call) for call in calls):
        return True
    inside = {id(call) for call in calls}
    return any(id(call) in inside and steps_once(callee) for call, callee in callees(facts.index, unit))


def _epoch_output_message(output: Store) -> str:
    text = cst.Module([]).code_for_node(output.value_expr)
    if output.via is None:  # an entry written in the return
        what, fix = f"`{text}` with its autograd graph", f"return `{text}.detach()`"
    else:  # a dict returned by name: "entry `x`" or "entries `x`, `y`" keep a graph
        one = output.via.startswith("entry ")
        what = f"`{text}`, whose {output.via} {'keeps its' if one else 'keep their'} autograd graph"
        fix = "detach it" if one else "detach them"
    return (
        f"`training_step` returns {what}, and Lightning keeps every step's outputs for "
        "`training_epoch_end`: the epoch's activations stay alive until it ends (from 1.6 on, Lightning "
        f"detaches only `loss`); {fix}"
    )
