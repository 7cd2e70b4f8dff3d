"""TL004: autograd history accumulated across loop iterations."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from tensorlint.analysis import (
    BACKWARD_CALLS,
    Accumulation,
    Collected,
    Facts,
    Loop,
    Role,
    Store,
    Unit,
    bounded_per_call,
    callee_name,
    calls_in,
    calls_under_no_grad,
    contains,
    dotted_name,
    is_loss_name,
    method_call,
    names_in,
    names_reaching,
    own_nodes,
    placed,
    references,
    reset_only_while_built,
    retain_graph_flag,
    root_name,
    runs_per_batch,
    string_value,
    target_names,
    tensor_keyed,
    walk,
    with_import,
    wrapped_in_with,
)
from tensorlint.rule import Applicability, NodeFix, Report, Rule

_FORWARD_CODE = (Role.FORWARD, Role.MODULE_HOOK, Role.TENSOR_HOOK)
# Calls that mean the loop trains: under `no_grad` they would fail or update nothing.
_TRAINING_CALLS = frozenset(["backward", "manual_backward", "step", "zero_grad"])
_NO_GRAD = frozenset(["torch.no_grad", "torch.autograd.no_grad"])


class GraphAccumulatedInLoop(Rule):
    """
    ## What it does
    Checks for values that carry autograd history (a loss or a model output computed with
    grad enabled) accumulated across the iterations of a loop into something that outlives
    the iteration (`total = total + loss + penalty` as well, however many terms). A loop over data iterates a DataLoader or a name for data (`train_loader`,
    `val_set`, `train_dl`, `batches`), directly or through the function's own names
    (`pbar = tqdm(loader)`, then `for x, y in pbar`), fetches with `next()` (not a search for the
    first match, `next(filter(match, keys), None)`), hands data to a
    function (`get_batch(data_source, i)`), calls `backward()`, or counts batches by its variable
    (`for batch_idx in range(len(features))`, not `batch_size`). In a function that evaluates
    (named for it: `evaluate`, `test`, `predict`, `score`, ...; or calling `model.eval()`; not a
    network's own methods), a loop that runs a network on its data is one whatever its names: over
    an array batched by hand (`for i in range(0, len(X), batch_size)`), over pairs of examples
    (`for x, y in zip(X_test, y_test)`, `for src, tgt in pairs`), over items named for examples
    (`for ex in eval_examples`), or indexing data (`x, y = dataset[i]` in
    `for i in range(len(dataset))`), or in strided windows of an input, as many as it is long
    (`for begin in range(0, seq_len, stride)` after `seq_len = ids.size(1)`, also through a
    generator of the file that loops so; not a network run in chunks by a function that returns
    what it computed with its graph and neither scores the chunks nor calls `eval()`: NeRF's
    `inference`, whose caller trains on it). Calling a project module whose `forward` drops the
    graph in its own code (`.detach()`, `.item()`, `no_grad`) gives what that `forward` returns:
    an explainer's detached masks carry no history. A loop that steps an environment (`obs, r, done, info =
    env.step(a)`), or that extends a sequence it generates (`ids = torch.cat([ids, tok], -1)` in a
    function named for generating, sampling or decoding, or one that evaluates), runs once per step
    or token, also in a helper that a loop over batches calls (`decode_greedily(model, src)` per
    validation batch, its steps `model.decode(memory, hyp)`: a network's method makes a new graph
    from the encoder's output): what it accumulates is reported unless the function returns it for
    its caller's `backward()` (an A2C rollout's log-probabilities, a sampled caption's for
    REINFORCE). So does
    a sampler's loop in a function named so: each step rebuilds a state from the network's output
    on it and from its own previous value (DDIM's `eps = self.unet(x, t)`, also through a method
    of the class that runs the network, `eps = self._eps(x, t)`; `x0 = ...`, `x = a * x0 + d`; a
    beam's scores through the candidates it keeps), and the graph of every step stays alive
    until sampling returns; the state the function returns is reported where the file shows its
    calls and none runs under `no_grad` or backpropagates the samples (DDPO-style training through
    the sampler), nor gives it a network frozen with `requires_grad_(False)` (also one a loader
    hands back in a tuple: `net, cfg = load_model(path)`, then `Sampler(net)`). A loop
    over a fixed list of views or transforms is not, nor, in a network's own method, one over the
    pieces it cut from its input (`batches = []` filled from the chunks of a string: one output's
    graph), whatever the list is named, nor one over a list that the function fills a fixed number
    of times, no fill in a loop of its own (a step's labelled and unlabelled batches, `data_list =
    []` then one `append` each): the few pieces of one iteration, whose history a list made afresh
    in that iteration keeps only until the next. A comprehension over a loader
    is such a loop: `[criterion(model(x), y) for x, y in val_loader]`, and a generator that
    `sum`, `list` or `torch.cat` folds together, keep every batch's graph at once (not one consumed
    a batch at a time, nor micro-batches summed into a loss that is backpropagated).
    Accumulations: `total += loss`, `total = total + loss`, running averages
    (`smooth = 0.98 * smooth + 0.02 * loss`, `m = (m * i + loss) / (i + 1)`), `losses.append(loss)`,
    `preds = torch.cat([preds, out])` (also as `out if preds is None else torch.cat(...)`),
    `stats[k] += loss`, `outputs[i] = out`, `history[step] = loss` into a list of placeholders
    (`[None] * steps`) that a counter fills (`step += 1`; not a ring, `recent[step % n]`), writes
    into a tensor made before the loop
    (`probs[i * bs:(i + 1) * bs] = model(x)` after `probs = torch.zeros(...)`: an in-place copy
    that autograd chains onto the tensor's history), values wrapped in dicts, tuples, dataclass and `namedtuple` records
    (`outputs.append({"loss": loss})`), and helpers that do it for the loop:
    `meter.update(loss)` where `AverageMeter.update` does `self.sum += val * n` (also meters kept
    in a dict: `meters[name].update(value)` with `meters = defaultdict(Meter)`; a buffer of meters
    that is itself a dict, `MeterBuffer(defaultdict)` with its factory given to `super().__init__`
    and `self[k].update(v)` in its `update`; an event storage that a module function hands out
    from a global, `storage = get_event_storage()` returning the innermost of the storages that
    `__enter__` pushes; not a meter that keeps a bounded window, `deque(maxlen=n)`), or
    `record(history, loss)` where `record` appends its argument, or `acc = accumulate(acc, out)` where
    the file's `accumulate` adds to the container it is given and hands it back; a function that the loop's
    function defines and calls in the loop (`for batch in loader: _step(batch)`) runs as if
    written in its body, so what it adds to its caller's names (`losses.append(loss)` in `_step`)
    is judged in that loop. Helpers are followed into the
    functions and classes of the same file and of the project's modules that its imports resolve
    to; the finding names the method that keeps the value. An object the caller passes is an
    instance of the project's class its annotation names (`meter: ErrorMeter`), or, unannotated
    (`def fit(model, loader, history)`), of the one class (or class family: a base whose method
    does nothing, and its overrides) of the file that defines the method called on it
    (`history.record(loss)`), except for the methods of builtin containers (`update`, `append`,
    `get`): `logs.update(...)` stays a dict's, unless the object is named for the class
    (`tracker.update(emb)` beside `class EmbeddingTracker`), or an item of a container named for
    it (`meters["loss"].update(loss, n)`: of the classes named `...Meter`, the one whose `update`
    the call fits; a `TimeMeter.update(self, n=1)` cannot take two values). A loss that a submodule's
    forward leaves on it (`getattr(module, "aux_loss")` over `model.modules()`, a router's
    balancing loss) carries that forward's graph. Objects called through their base class count
    too: `for cb in self.callbacks: cb.on_batch_end(self, loss)`, with `callbacks:
    list[Callback]` or a `Callback` family in the file, keeps what any override keeps. A function of the file that the loop
    calls by name (`train_step(model, batch, stats)`, a nested `step(x, y)`), or a method it calls
    on `self` (`self._evaluate_one(batch)`, and the helpers that one calls), runs once per batch:
    what it adds or appends to a global, to a closure cell (`nonlocal total`, the enclosing
    function's `losses`, also a list the enclosing function was itself handed) or to a container
    the caller made before the loop is accumulated across the loop's iterations; its parameters
    take what each call passes, as it was where the call is made. The framework's loop over
    batches counts too: `self.total_loss += loss` (or `self.meter.update(loss)`) in a per-step method
    (`training_step`, `compute_loss`, `*_step`, `*_batch`, and the `step` of an optimizer written
    by hand, a subclass of `torch.optim.Optimizer` whose `step` runs with gradients on: `d_p =
    p.grad.add(p, alpha=wd)` over `group["params"]` has history, and its momentum buffer in
    `self.state`, `buf.mul_(m).add_(d_p)`, chains every step's; torch.optim's own optimizers
    decorate `step` with `@torch.no_grad()`, and older code reads `p.data`), and state that `forward` folds its
    input into and nothing resets while training runs (a `reset_running_stats()` that only
    `__init__` calls is no reset) (`self.running_mean.mul_(m).add_(mean)`; a frozen copy of a network
    moved towards the live one, `target_p.mul_(tau).add_(online_p)` over
    `zip(self.online.parameters(), self.target.parameters())`, whose parameters require grad,
    `self.ema = 0.9 * self.ema + 0.1 * h`, `avg[k] = f(avg[k], v)`; also through the method's
    names, `h_in = self.h * mask; _, h = self.net(x, h_in); self.h = h`, a recurrent state a
    rollout's `act` carries from step to step, unless detached on the way), and buffers that it writes
    in place with a live value (`self.queue[ptr] = k`, `self.center.copy_(h.mean(0))`,
    `index_copy_`, `scatter_`, `fill_`; also a singular value computed from the layer's own
    weight, `self.sigma[:] = u @ w @ v`, in a spectral-norm mixin that `forward` calls): autograd records an in-place write on the buffer,
    chained to the buffer's earlier history, so the chain gains every call's graph (measured
    with `tensorlint verify` on CPU and an H200: in a train step, +8 autograd nodes per call on
    the host and no tensor bytes, since `backward()` frees the activations; without a backward
    through them, each call's activations stay too). Not reported there: writes under
    `torch.no_grad()` (also a helper decorated with it), of detached values or values without a
    graph, in `__init__`, slots of a list attribute (`self.outputs[i] = h` replaces one), an
    attribute moved or cast (`self.logvar = self.logvar.cuda()`), a buffer detached in place in a
    statement of its own on every call (`self.sums.detach_()`, then `self.sums.lerp_(s, m)`), and a
    local copy bound anew (`w = self.weight; w = w - w.mean()` leaves the weight as it was). Not
    reported either: a window of the last n items (`self.bank = (self.bank + [x])[-n:]`, a
    `deque(maxlen=n)` a loop appends to), a queue
    that the same loop takes items off (`outputs.append(out)`, then `outputs.pop(0)`), the
    running statistics of a normaliser (`RunningMeanStd.update(x)`, an RMS rescaler, a class made
    of them), which training code feeds observations, rewards and returns, unless the file shows a
    value with a graph handed to it; and what a method named for what it
    does to a network returns (`learner.update_model(batch)`: not the network's output).

    ## Why is this bad?
    Each such value keeps its autograd graph alive, so the accumulator keeps every
    iteration's graph. PyTorch's FAQ names it first among the causes of out-of-memory errors:
    "Don't accumulate history across your training loop." Measured on an NVIDIA H200:
    - in a loop without `backward()` (an evaluation loop not under `torch.no_grad()`), every
      batch's activations stay on the GPU: about 8.4 MB per iteration for an MLP on a batch of
      256, for `val_loss += loss` and for `losses.append(loss)` alike;
    - in a training loop that calls `backward()`, the activations are freed but the autograd
      nodes chained through `total_loss` still grow on the host, iteration after iteration;
      with `backward(retain_graph=True)` nothing is freed, and every batch's activations stay
      alive as in an evaluation loop (TL011 reports the flag).

    Not reported: code under `torch.no_grad()` or `torch.inference_mode()` (context or
    decorator, also a decorator of the project that applies one: a factory whose `decorate(fn)`
    returns `torch.inference_mode()(fn)`, a wrapper that calls `fn` inside `with torch.no_grad():`;
    one of a package the project does not show, named for it: `@smart_inference_mode()`,
    `@StaticCaptureEvaluateNoGrad(model=model)`; a context held in a name, `ctx = torch.no_grad()`
    then `with ctx, autocast:`; also after `torch.set_grad_enabled(False)` as a statement, until it is set again,
    and a function or method whose every call in the file runs under them, or in a Lightning
    module's `validation_step`/`test_step`, up to two callers up: `with
    torch.no_grad(): pred = model.inference(g, x)` (a call of a method so named on an object of a
    class the file imports, `exporter.run(model)` after `exporter = Exporter(path)`, is that class's
    method, not this one), unless another module of the project calls
    one of those callers with gradients on (the file's `evaluate` under `no_grad` in its `main`,
    but after each epoch in the training script); for one with a loop that its file never
    calls, every call by its name in the project's other modules, those beside it first), the
    `forward` of a module built only as a part of modules that run it so (llama's attention, which
    writes its key-value cache on every call, built in a block built in a model whose `forward` is
    `@torch.inference_mode()`; not where another module of the project builds the attention or
    the block itself, nor where another method of the model runs them with gradients on),
    including a loss computed before the block and written there into a stats tensor
    (`stats[i] = loss`, `running += loss`: no history is recorded; a list appended there still
    keeps the loss and its graph, and is reported), Python numbers (`loss.item()`, `float(loss)`), detached values,
    a local container that the function turns into a NumPy array without detaching it
    (`torch.cat(reprs).cpu().numpy()`, or hands joined to NumPy, scikit-learn or SciPy:
    `roc_auc_score(torch.cat(ys), torch.cat(scores))`; also what the function computes from it and
    converts, `sims = torch.cat(feats) @ text.t()`, then `sims.cpu().numpy()`; each raises on a tensor that requires grad,
    so code that runs them holds tensors without one; not the list itself, `np.sum(losses)`, which
    NumPy before 1.20 summed as objects, graphs and all), a sum that is
    backpropagated in the same function (gradient accumulation; where every `backward()` runs in
    the loop, one per micro-batch, only a sum the loop itself backpropagates: a total made after
    the loop for the log backpropagates nothing), helpers that convert what they
    are given (`float(val)`, `val.item()`, also after an `isinstance(val, torch.Tensor)` test, and
    what they keep only where a test makes the value a Python number: `if type(v) == float:`, the
    `else` of `if not isinstance(v, float):`) or calls that pass `loss.item()`, arithmetic on a
    weight's `.data` (`self.weight.data -= delta`: no history is recorded), ratios of sizes
    (`out.size(0) / x.size(0)`), leaves (`torch.empty(shape, requires_grad=True)`, or
    `.requires_grad_()`: a pipeline stage's received buffers), items written into a
    NumPy array (`self.q_values[i] = ...` with `np.zeros(n)`: NumPy stores a number), per-layer outputs collected in
    `forward` or in a loop over modules, values carried from one iteration to the next
    (`h = cell(x, h)`) in a loop that does not feed data (one graph unrolled over time steps;
    over batches, each batch's loss is still added with its graph), lists filled by a loop that does not
    feed data (no DataLoader, `next()` or `backward()`) when they reach what the function
    returns, directly or through other lists (one embedding per adapter, returned), values
    assigned afresh earlier in the same iteration (`loss = a; loss = loss + b`; also on every path
    to the sum only, `total = 0` in the evaluation branch of a batch, before a loop over its
    sources), views of a graph
    made before the loop (`out[i]` in a loop that makes no graph), outputs of modules frozen with
    `requires_grad_(False)`, `isinstance(val, torch.Tensor)`-guarded conversions to numbers, the
    log record unpacked beside a loss (`loss, log_vars = model(x)`: the numbers a step reports),
    rewards unpacked beside a loss (`loss, chosen_rewards, rejected_rewards = loss_fn(...)`: a
    preference loss reports them detached, as DPO's do in TRL, torchtune and OpenRLHF; a reward
    model's own scores keep its graph, unpacked without a loss or from a call that is or is
    handed a network: `pairwise_loss(reward_model, batch)`),
    comprehensions in `forward` (one graph, the one its caller asked for),
    slots that `forward` folds into on the objects it is handed (`g.ndata["h"] = g.ndata["h"] + m`
    on the batch's graph) or that the same call set afresh first, attributes too (`self.emb =
    self.table(ids)`, then `self.emb = self.norm(self.emb)`), the elements of a tuple that a
    project model's `forward` returns as numbers or comparisons (`loss, acc = model(x)`, also
    through `DistributedDataParallel`, `DataParallel` or `torch.compile`),
    ground truth a metric's `update` is given (`target`, `labels`, `mask`: data, not model
    outputs), counts of a batched graph (`number_of_nodes()`, `batch_size`: Python ints) and the
    counts a model returns beside its losses (`ctc_loss, att_loss, tot_frames = model(x)`),
    torchmetrics' `update` (run without grad), and a metric whose `forward`, its own or a base
    class's in another module, runs `update` under `no_grad` (Lightning's metrics before
    torchmetrics), Lightning's `validation_step`, `test_step` and `predict_step` (of a
    LightningModule, through bases of other modules too) and the evaluation hooks of a
    LightningModule or `Callback` (`on_validation_*`, `on_test_*`, `on_predict_*`: run under
    `no_grad`), the body of the project's own `@contextmanager` that yields under
    `torch.set_grad_enabled(flag)` or `no_grad()` (`with self._set_training_mode(False):`), a
    `loss` bound in a loop other than the one that backpropagates a `loss` (the name is shared,
    the graph is not), networks kept in a list (`teachers.append(policy)`: parameters, not a
    batch's history), and state that a decoder step folds into but that the `forward` calling it
    starts afresh (`self.hidden = torch.zeros(...)`, `inputs.new(b, t).zero_()`, directly or in
    a method it calls such as `_init_states()`): one sequence's graph, which that `forward` builds.

    ## Example
    ```python
    model.eval()
    val_loss = 0.0
    for x, y in val_loader:
        val_loss += criterion(model(x), y)
    ```

    Use instead:
    ```python
    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            val_loss += criterion(model(x), y).item()
    ```

    ## Fix safety
    A finding carries one fix, chosen by the loop. In a loop that does not train (no
    `backward()`, `step()` or `zero_grad()` in it, nor in the functions and methods of the
    module that it calls) and does not hand control back to a caller (no `yield`, `await`,
    `async for`), the fix wraps the loop in `with torch.no_grad():`, spelled as the module spells
    torch (`th.no_grad()`, or `no_grad()` when it is imported by name; `import torch` is added
    when nothing binds the name). That removes the cause, since no graph is built at all, and it
    works for values wrapped in lists and dicts too. It is unsafe: whatever the loop computes
    comes out without gradients, which breaks a caller that backpropagates through the result
    (a function's total that training code calls `.backward()` on), and the total stays a
    tensor rather than becoming a number. A generator or coroutine is left alone because the
    grad mode belongs to the thread: suspended under `no_grad`, it would switch gradients off
    for its caller too.

    Elsewhere (a training loop, or state kept across the calls of a step method), the fix
    accumulates `loss.item()` when the value is a loss (a one-element tensor: a name that
    `.backward()` is called on, `outputs.loss`, a `criterion(...)` or `F.*_loss` call) and the
    accumulator is only used as a number; otherwise it accumulates `value.detach()`, which keeps
    a tensor for code that later stacks or calls methods on it. Both are unsafe: `.item()` turns
    the total into a Python float and waits for the GPU; `.detach()` cuts gradients, which
    matters if the sum was meant to be backpropagated. Values wrapped in lists or dicts get no
    fix there.

    ## References
    - [PyTorch FAQ: Don't accumulate history across your training loop](https://docs.pytorch.org/docs/stable/notes/faq.html)
    - [torch.no_grad](https://docs.pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    code = "TL004"
    fix_availability = "Sometimes"
    name = "graph-accumulated-in-loop"
    summary = "Autograd history accumulated across loop iterations"
    grows_over_a_run = True
    invalid = (
        """
        import torch
        from torch import nn

        model = nn.Linear(8, 2)
        criterion = nn.CrossEntropyLoss()

        def evaluate(loader):
            model.eval()
            total = 0.0
            for x, y in loader:
                total += criterion(model(x), y)
            return total / len(loader)
        """,
        """
        import torch

        def train(model, loader, optimizer):
            losses = []
            for x, y in loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss)
            return losses
        """,
    )
    valid = (
        """
        import torch
        from torch import nn

        model = nn.Linear(8, 2)

        @torch.no_grad()
        def evaluate(loader):
            total = 0.0
            for x, y in loader:
                total += nn.functional.cross_entropy(model(x), y)
            return total
        """,
        """
        import torch

        def train(model, loader, optimizer, accumulation=4):
            model.train()
            accumulated = 0.0
            for step, (x, y) in enumerate(loader):
                accumulated = accumulated + torch.nn.functional.mse_loss(model(x), y) / accumulation
                if (step + 1) % accumulation == 0:
                    accumulated.backward()
                    optimizer.step()
                    optimizer.zero_grad()
                    accumulated = 0.0
        """,
    )

    def check(self, facts: Facts) -> Iterator[Report]:
        events: list[Accumulation | Store] = [*facts.accumulations, *(s for s in facts.stores if s.grows)]
        reported: set[int] = set()  # a helper that keeps two of a call's arguments: one finding
        for event in events:
            if not event.value.graph or event.value.module or id(event.node) in reported:
                continue  # (a network, `teachers.append(policy)`, holds parameters, not a batch's history)
            if isinstance(event, Store) and tensor_keyed(facts, event):
                continue  # keyed by a tensor: TL015 reports it, with the cause
            event = _as_judged(facts, event)
            if _folded_across_calls(event):
                if _per_call(event) and (across := _across_steps(facts, event)) is not None:
                    reported.add(id(event.node))
                    target = event.target if isinstance(event, Accumulation) else event.container
                    yield Report(event.node, across, _fix(facts, event, root_name(target) or ""))
                continue
            if any(role in event.unit.roles for role in _FORWARD_CODE):
                continue  # forward builds the graph its caller asked for
            target = event.target if isinstance(event, Accumulation) else event.container
            root = root_name(target)
            if root is None:
                continue
            if event.reset_this_iteration:
                continue  # assigned afresh earlier in the same iteration: one iteration's history
            if _read_as_numpy(facts, event.unit, root):
                continue  # `torch.cat(xs).cpu().numpy()` raises on a tensor that requires grad: none has a graph
            if (
                isinstance(event, Store)
                and type(target) is not cst.Subscript
                and facts.container_kind(event.unit, target)[1] == "bounded"
            ):
                continue  # `deque(maxlen=n)`: the last n iterations' history (not `windows[k]`: a window per key)
            loop = _crossing_loop(root, event.loops, event.reset_in)
            if loop is None:
                continue
            owner = facts.loop_owner(event.unit, loop)  # a step function's loop is its parent's
            if not loop.feeds_data:
                cls = owner.cls
                if cls is not None and cls.is_module and root not in loop.refined:
                    continue  # model code: its loops over tiles, chunks or lists build the output (not its sampler's steps)
                returned = root in names_reaching(owner, facts.returned.get(id(owner), set()))
                if returned and not (loop.generates and _result_kept_with_its_graph(facts, owner)):
                    continue  # builds the function's result, not a loop over data
                if loop.refined and _calls_with_grad(facts, owner) is None:
                    continue  # a sampler that no code here calls with gradients on: its callers decide
                if _one_entry_per_item(event, loop):
                    continue  # `packed[node.name] = pack(node)`: a table of a fixed collection
            if isinstance(event, Store) and id(loop.node) not in facts.graph_loops:
                continue  # no graph is made in the loop: it stores views of one made before (`out[i]`)
            if not (loop.feeds_data or loop.generates) and loop.depends_on_carried(event.value_expr, exclude=root):
                continue  # one graph unrolled over time steps, not one graph per batch
            if _accumulated_for_backward(owner, root, loop):
                continue  # summed, then backpropagated: gradient accumulation
            reported.add(id(event.node))
            fix = _no_grad_fix(facts, owner, loop) or _fix(facts, event, root)
            # `backpropagate(loss, optimizer)`: a helper of this module runs the loop's backward
            backward = loop.calls_backward or _trains(facts, owner, loop.node, 0, BACKWARD_CALLS)
            yield Report(event.node, _message(root, loop, event, owner, backward), fix)
        for collected in facts.collected:
            if _backpropagated(collected):
                continue  # one loss over micro-batches, backpropagated: gradient accumulation
            if any(role in collected.unit.roles for role in _FORWARD_CODE):
                continue  # forward builds the graph its caller asked for (`zip(chunks, sizes_iter)`)
            iterated = cst.Module([]).code_for_node(collected.node.for_in.iter)
            kind = "generator" if type(collected.node) is cst.GeneratorExp else "comprehension"
            yield Report(
                collected.node,
                f"this {kind} over `{iterated}` keeps every batch's autograd history at once: each "
                "element carries its batch's graph, and all of them stay alive together (no `backward()` "
                "frees them); take `.item()` per batch, or run it under `torch.no_grad()`",
            )


def _calls_with_grad(facts: Facts, generator: Unit) -> list[tuple[cst.Call, Unit]] | None:
    """The file's calls of a generating function, each with the function making it, when there are
    some and none runs under `no_grad`; else None (a sampler of a library, `decode.py`'s beam search
    that another module calls under `@torch.no_grad()`)."""
    name = generator.name
    if not name or any(calls_under_no_grad(facts.index, name)):
        return None
    calls = [
        (call, unit)
        for unit in facts.index.units
        if unit is not generator
        for call, _ in placed(unit, cst.Call)
        if callee_name(call) == name
    ]
    return calls or None


def _result_kept_with_its_graph(facts: Facts, generator: Unit) -> bool:
    """Whether what a generating function returns (`samples = sampler.sample(shape)`) keeps the
    graph of all its steps where nothing frees it: the file shows its calls, none runs under
    `no_grad` and none backpropagates the result (DDPO-style training through the sampler does)."""
    calls = _calls_with_grad(facts, generator)
    for call, unit in calls or []:
        if any(contains(expr, call) for expr in unit.backpropagated):
            return False
        given = {
            name
            for assign, _ in placed(unit, cst.Assign)
            if contains(assign.value, call)
            for target in assign.targets
            for name in target_names(target.target)
        }
        if given & names_reaching(unit, unit.backpropagated_names):
            return False
    return calls is not None


def _backpropagated(collected: Collected) -> bool:
    """Whether what the comprehension builds reaches a `backward()` of the same function."""
    unit = collected.unit
    if collected.into & unit.backpropagated_names:
        return True
    return any(collected.node is node for expr in unit.backpropagated for node in walk(expr))


def _accumulated_for_backward(owner: Unit, root: str, loop: Loop) -> bool:
    """Whether what the loop accumulates reaches a `backward()` (gradient accumulation): through
    any assignment where a `backward()` runs outside the loop; where every one runs in it (one per
    micro-batch), through the loop's own assignments only: a total made after the loop for the
    log (`pg_loss = torch.cat(pg_loss_list).sum().item()`) feeds none of them."""
    if root not in owner.backpropagated_names:
        return False
    inside = {id(node) for node in walk(loop.node)}
    if not owner.backpropagated or not all(id(expr) in inside for expr in owner.backpropagated):
        return True
    reached = {name for expr in owner.backpropagated for name in references(expr)}
    todo = list(reached)
    while todo:
        for name in loop.reads.get(todo.pop(), ()):
            if name not in reached:
                reached.add(name)
                todo.append(name)
    return root in reached


def _folded_across_calls(event: Accumulation | Store) -> bool:
    """Whether the calls, not a loop around the event, are what it crosses: no loop; loops over a
    batch's own items (`for name, value in loss_dict.items()`) in a function called once per batch
    (not the tokens its own decoding loop generates); or loops that compute (`for name, p in
    model.named_parameters()` in an EMA's `update`) in a per-step method or `forward`."""
    if not event.loops:
        return True
    if any(loop.feeds_data for loop in event.loops):
        return False
    if isinstance(event, Accumulation) and any(root_name(event.target) in loop.refined for loop in event.loops):
        return False  # a sampler's state, rebuilt at every step of the call's own loop
    if any(loop.generates and not loop.refined for loop in event.loops):
        return False  # a decoder's tokens (an environment's steps): the call's own loop crosses them
    if runs_per_batch(event.unit):
        return True
    repeating = any(role in event.unit.roles for role in (Role.STEP, *_FORWARD_CODE))
    return repeating and all(loop.computes for loop in event.loops)


def _one_entry_per_item(event: Accumulation | Store, loop: Loop) -> bool:
    """A store keyed by the item of a loop that feeds no data: one entry per item of a fixed
    collection (graph nodes, layers, files), not one per batch."""
    if not isinstance(event, Store) or type(loop.node) is not cst.For or type(event.node) is not cst.Assign:
        return False
    items = target_names(loop.node.target)
    for target in event.node.targets:
        if type(target.target) is cst.Subscript:
            keys = names_in(target.target.slice[0]) if target.target.slice else set()
            return bool(keys) and keys <= items
    return False


def _per_call(event: Accumulation | Store) -> bool:
    """Accumulations, and what a function that a loop over batches calls appends: the loop's own
    history, as if written in it (a framework's per-step method keeping a graph is TL001's)."""
    return isinstance(event, Accumulation) or runs_per_batch(event.unit)


def _inputs(unit: Unit) -> set[str]:
    """The parameters of `forward` (and of what it calls on `self`) other than `self`: the
    inputs of one call, which its caller makes per batch (a hook's module, by contrast, lives on)."""
    return {p.name.value for p in unit.argument_params}


def _across_steps(facts: Facts, event: Accumulation | Store) -> str | None:
    """The message for state that a repeated call folds a graph into: `self.total += loss` in a
    per-step method (the framework's loop over batches is the loop), `losses.append(loss)` in a
    function the loop calls, or a running statistic that `forward` updates from its input
    (`self.running_mean.mul_(m).add_(mean)`) and nothing resets."""
    role = next((r for r in (Role.STEP, *_FORWARD_CODE) if r in event.unit.roles), None)
    target = event.target if isinstance(event, Accumulation) else event.container
    root = root_name(target)
    lifetime, kind = facts.container_kind(event.unit, target)
    if role is None or root is None or lifetime not in ("attribute", "global", "closure", "argument"):
        return None
    if type(event.node) is cst.Assign and type(target) is cst.Name and lifetime == "attribute":
        return None  # `w = self.weight; w = w - w.mean()` binds the name anew: the attribute is unchanged
    called_object = role is Role.STEP and event.unit.name == "__call__"
    if (role is Role.FORWARD or called_object) and root.split(".")[0] in _inputs(event.unit):
        # `g.edata["m"] = g.edata["m"] + x` on the graph `forward` is handed, a cache or a loss object
        # handed to an attention processor's `__call__`: the caller's, per call
        return None
    if isinstance(event, Store):
        # A slot of a tensor written in a function the loop calls chains history as `+=` does.
        in_place = kind == "tensor" and runs_per_batch(event.unit)
        # What the enclosing function or the caller was handed, added to without a key (`append`,
        # `+= [x]`, a helper that appends): a list, as its loop appending to it directly would be
        # judged (`val_losses.append(loss)` in a nested step).
        handed_list = kind is None and lifetime in ("closure", "argument") and event.key is None
        grows = kind in ("list", "dict") or in_place or handed_list or (event.concatenates and kind in (None, "tensor"))
        if not grows or bounded_per_call(facts, event):
            return None  # a bounded container, or one emptied in the call
    if root in facts.resets(event.unit) or root in event.unit.backpropagated_names:
        return None  # reset every call, or summed and backpropagated in the step
    if role is not Role.STEP and kind == "managed" and not _reset_only_while_built(facts, event.unit, root):
        return None  # forward's caller resets it (`model.aux_loss = 0` after each step): not visible here
    calls = event.unit.roles[role] if role is not Role.MODULE_HOOK else f"a hook {event.unit.roles[role]}"
    if _trains(facts, event.unit, event.unit.node, 0, BACKWARD_CALLS):
        effect = (
            "after `backward()` the activations are freed, but the autograd nodes chained through it "
            "grow on the host every call until it is reset"
        )
    else:
        effect = "every call's autograd graph stays chained to it until it is reset"
    if event.via:
        call = cst.Module([]).code_for_node(event.node)
        advice = "pass `.item()` or `.detach()`"
        if (isinstance(event, Store) or event.appended) and role is not Role.STEP:
            # a list kept per forward: detached, every call still adds its tensor (4 MiB per call for a 4 MiB output)
            advice = "pass `.item()`, or empty it each step (`.detach()` drops the graph, not the tensor)"
        return f"`{call}` keeps autograd history across calls of {calls}: {event.via}; {effect}; {advice}"
    advice = "accumulate `.item()` or `.detach()`, or update it under `torch.no_grad()`"
    return f"`{root}` accumulates autograd history across calls of {calls}: {effect}; {advice}"


def _reset_only_while_built(facts: Facts, unit: Unit, root: str) -> bool:
    """`self.running_var` reset only by `reset_running_stats()`, which `__init__` calls."""
    owner, _, attribute = root.partition(".")
    if unit.cls is None or owner != unit.self_name or "." in attribute:
        return False
    return reset_only_while_built(facts.index, unit.cls, attribute)


def _fix(facts: Facts, event: Accumulation | Store, root: str) -> NodeFix | None:
    """Accumulate a Python number where the value is a loss and the total is used as a number;
    otherwise a detached tensor, which keeps working where the accumulator is used as one."""
    value = event.value_expr
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return None  # wrapped values: which element to detach is a choice for the author
    if root in names_in(value):
        return None  # `total = total + a + b`: which terms to detach is the author's choice
    scalar = isinstance(event, Accumulation) and _is_loss(facts, event.unit, value, depth=0)
    # A helper (`meter.update(loss)`) owns its total: only the local accumulator's uses matter.
    method = "item" if scalar and (event.via or not _used_as_tensor(event.unit, root)) else "detach"
    described = cst.Module([]).code_for_node(value)
    return NodeFix(f"Accumulate `{described}.{method}()`", Applicability.UNSAFE, ((value, method_call(value, method)),))


def _no_grad_fix(facts: Facts, unit: Unit, loop: Loop) -> NodeFix | None:
    """`with torch.no_grad():` around a loop that neither trains nor suspends: no graph is built.

    The loop's body, its helpers in this module (two calls deep) included, must not call
    `backward()`, `step()` or `zero_grad()`, and must not `yield` or `await`: the grad mode is
    per thread, and a generator or coroutine suspended under `no_grad` would switch it off for
    its caller. torch is spelled as the module spells it; `import torch` is added if it has none.
    """
    node = loop.node
    if loop.calls_backward or (type(node) is cst.For and node.asynchronous) or _trains(facts, unit, node, 0):
        return None
    if any(_suspends(inner) for inner in own_nodes(node.body)):
        return None
    module = facts.index.module_unit.node
    assert type(module) is cst.Module
    spelled = _no_grad_spelling(facts, module, unit)
    context = cst.Call(func=spelled or cst.Attribute(cst.Name("torch"), cst.Name("no_grad")))
    wrapped = wrapped_in_with(node, context)
    message = f"Wrap the loop in `with {cst.Module([]).code_for_node(context)}:`"
    if spelled is not None:
        return NodeFix(message, Applicability.UNSAFE, ((node, wrapped),))
    top = next((i for i, statement in enumerate(module.body) if contains(statement, node)), None)
    if top is None:
        return None  # not in this module's tree: nothing to edit here
    if module.body[top] is node:  # a loop in the module body: the import lands next to it, one edit
        whole = module.deep_replace(node, wrapped)
        assert type(whole) is cst.Module
        replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...] = ((module, with_import(whole, "torch", top)),)
    else:
        replacements = ((node, wrapped), (module, with_import(module, "torch", top)))
    return NodeFix(f"{message} (and `import torch`)", Applicability.UNSAFE, replacements)


def _trains(facts: Facts, unit: Unit, node: cst.CSTNode, depth: int, calls: frozenset[str] = _TRAINING_CALLS) -> bool:
    """Whether code calls `backward()`, `step()`, `zero_grad()` or `torch.autograd.grad` (or only
    those of `calls`), itself or through the functions and methods of this module that it calls."""
    for inner in own_nodes(node):
        if type(inner) is not cst.Call:
            continue
        if callee_name(inner) in calls or facts.imports.qualify(inner.func) == "torch.autograd.grad":
            return True
        helper = _helper(unit, inner) if depth < 2 else None
        if helper is not None and _trains(facts, unit, helper, depth + 1, calls):
            return True
    return False


def _helper(unit: Unit, call: cst.Call) -> cst.FunctionDef | None:
    """The function of this module that a call runs: `helper(...)` or `self.method(...)`."""
    func = call.func
    if type(func) is cst.Name:
        found = unit.lookup_def(func.value)
        return found.node if found is not None and type(found.node) is cst.FunctionDef else None
    method = unit.method_unit()
    if (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and method is not None
        and method.cls is not None
        and func.value.value == method.self_name
    ):
        return method.cls.methods.get(func.attr.value)
    return None


def _suspends(node: cst.CSTNode) -> bool:
    """`yield`, `await`, `async for` and `async with`: code that hands control to its caller."""
    if isinstance(node, (cst.Yield, cst.Await)):
        return True
    return isinstance(node, (cst.For, cst.With)) and node.asynchronous is not None


def _no_grad_spelling(facts: Facts, module: cst.Module, unit: Unit) -> cst.BaseExpression | None:
    """How this code names `torch.no_grad`: `no_grad` imported by name, `th.no_grad` for `import
    torch as th`, `torch.no_grad`; None when nothing binds torch (the fix imports it)."""
    scopes: list[cst.CSTNode] = [module]
    around: Unit | None = unit
    while around is not None and around.parent is not None:  # the function's own imports, and its parents'
        scopes.append(around.node)
        around = around.parent
    torch_name = None
    for scope in scopes:
        for node in own_nodes(scope):
            if type(node) is cst.ImportFrom and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    local = alias.evaluated_alias or alias.evaluated_name
                    if facts.imports.aliases.get(local) in _NO_GRAD:
                        return cst.Name(local)
            elif type(node) is cst.Import:
                for alias in node.names:
                    name = dotted_name(alias.name) or ""
                    if alias.asname is None and name.split(".")[0] == "torch":
                        torch_name = torch_name or "torch"
                    elif alias.asname is not None and name == "torch":
                        torch_name = torch_name or alias.evaluated_alias
    return cst.Attribute(cst.Name(torch_name), cst.Name("no_grad")) if torch_name else None


def _is_loss(facts: Facts, unit: Unit, expr: cst.BaseExpression, depth: int) -> bool:
    """A value that is a loss, so a one-element tensor that `.item()` can take."""
    if depth > 3:
        return False
    if type(expr) is cst.Name:
        if expr.value in unit.graph_evidence:
            return True  # `.backward()` is called on it: a scalar
        return any(_is_loss(facts, unit, v, depth + 1) for v in unit.bindings.get(expr.value, []))
    if type(expr) is cst.Attribute:
        return expr.attr.value == "loss"  # outputs.loss
    if type(expr) is cst.Subscript:
        key = expr.slice[0].slice if expr.slice else None
        text = string_value(key.value) if type(key) is cst.Index else None
        return text is not None and "loss" in text
    if type(expr) is cst.BinaryOperation:
        return _is_loss(facts, unit, expr.left, depth + 1) or _is_loss(facts, unit, expr.right, depth + 1)
    if type(expr) is cst.Call:
        name = callee_name(expr) or ""
        qualified = facts.imports.qualify(expr.func) or ""
        reduced = name in ("sum", "mean") and not expr.args
        return (
            reduced
            or is_loss_name(name)
            or (qualified.startswith("torch.nn.functional.") and ("loss" in name or "entropy" in name))
        )
    return False


def _used_as_tensor(unit: Unit, root: str) -> bool:
    """Whether the function calls a method on the accumulator (`total.item()`): a float has none."""
    return any(
        type(node) is cst.Call and type(node.func) is cst.Attribute and dotted_name(node.func.value) == root
        for node in walk(unit.node)
    )


def _as_judged(facts: Facts, event: Accumulation | Store) -> Accumulation | Store:
    """The event of a step function that its parent calls in a loop (`for x in xs: _step(x)`), in
    that loop when the container outlives it; else with the function's own loops alone, judged
    across its calls as before. A name of the function's own (`parts = []`) is made afresh at
    each call: it outlives none of its caller's loops."""
    called_in = facts.loops_at_call.get(id(event.unit))
    if called_in is None:
        return event
    inherited = event.loops[: len(called_in[0])]
    root = root_name(event.target if isinstance(event, Accumulation) else event.container)
    own = root is not None and facts.made_at_each_call(event.unit, root.split(".")[0])
    if root is not None and not own and _crossing_loop(root, event.loops, event.reset_in) in inherited:
        return event
    return replace(event, loops=event.loops[len(called_in[0]) :])


def _read_as_numpy(facts: Facts, unit: Unit, root: str) -> bool:
    """Whether the function turns the local container, or what it computes from it, into a NumPy
    array without detaching it: `torch.cat(xs, 0).cpu().numpy()`, `(torch.cat(xs) @ w).numpy()`,
    `roc_auc_score(torch.cat(ys), torch.cat(xs))` (NumPy's, scikit-learn's and SciPy's functions
    take `np.asarray` of the tensor they are given). Each raises on a tensor that requires grad, so
    code that runs them holds tensors without a graph there. Not the list itself (`np.sum(losses)`): NumPy before 1.20 made an array of objects of
    the tensors that refused, and added them up, graphs and all."""
    if "." in root:
        return False
    for call, _ in placed(unit, cst.Call):
        if callee_name(call) == "numpy" and type(call.func) is cst.Attribute:
            converted = [call.func.value]
        elif (facts.index.imports.qualify(call.func) or "").startswith(_NUMPY_LIBRARIES):
            converted = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            # a tensor made from the list, not the list itself
            converted = [expr for expr in converted if not (type(expr) is cst.Name and expr.value == root)]
        else:
            continue
        if any(_made_from(facts, unit, expr, root) for expr in converted):
            return True
    return False


def _made_from(facts: Facts, unit: Unit, expr: cst.BaseExpression, root: str) -> bool:
    """Whether `expr` is `root`, or made from it with its graph kept: through copies, views, joins
    and arithmetic (`image_features @ text_features.t()`), and the names the function binds to such."""
    todo, seen = [expr], set()
    while todo:
        current = todo.pop()
        if type(current) is cst.Name:
            if current.value == root:
                return True
            if current.value not in seen:
                seen.add(current.value)
                todo.extend(unit.bindings.get(current.value, []))
        elif type(current) is cst.BinaryOperation:
            todo += [current.left, current.right]
        elif (inner := _graph_kept_from(facts, current)) is not None:
            todo.append(inner)
    return False


_NUMPY_LIBRARIES = ("numpy.", "sklearn.", "scipy.")


def _graph_kept_from(facts: Facts, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """What `expr` is made of with its graph, where it is a copy, a view or a join of it: the
    receiver of `.cpu()` or `.squeeze(0)`, the list of `torch.cat(xs)`, an item's container."""
    if type(expr) is cst.Subscript:
        return expr.value
    if type(expr) is not cst.Call:
        return None
    name = callee_name(expr)
    if type(expr.func) is cst.Attribute and name in _KEEPS_THE_GRAPH:
        if (facts.index.imports.qualify(expr.func) or "").startswith("torch.") and expr.args:
            return expr.args[0].value  # `torch.cat(xs)`, `torch.stack(xs)`
        return expr.func.value  # `x.cpu()`
    if type(expr.func) is cst.Name and name in _JOINS and expr.args:
        return expr.args[0].value  # `cat(xs)` imported from torch
    return None


# Tensor methods and torch functions whose result keeps its input's graph: a `.numpy()` after them
# raises as it would on the input (unlike `.detach()`, `.data`, `.tolist()`).
_JOINS = frozenset(["cat", "concat", "concatenate", "stack", "vstack", "hstack"])
_KEEPS_THE_GRAPH = _JOINS | frozenset(
    ["cpu", "cuda", "to", "float", "double", "half", "contiguous", "squeeze", "unsqueeze", "view", "reshape",
     "flatten", "permute", "transpose", "t", "clone", "type", "mean", "sum"]
)  # fmt: skip


def _crossing_loop(root: str, loops: tuple[Loop, ...], reset_in: frozenset[int]) -> Loop | None:
    """The innermost loop whose iterations the accumulator survives: a loop over data if one
    encloses the store (a batch's items stored by name, `for name, p in zip(names, probs)`, still
    grow with every batch), else the innermost loop that does not compute.

    Loops that compute (over layers, `range`, tensors) collect one graph; the accumulator
    leaks only if it also survives an enclosing loop over data. A reset stops the search.
    """
    survived = None
    for loop in reversed(loops):
        if root in loop.reset or id(loop.node) in reset_in:
            break  # (`total = 0` on the path to here in this iteration, if not on every path through it)
        if loop.computes:
            continue
        if loop.feeds_data:
            return loop
        survived = survived or loop
    return survived


def _message(root: str, loop: Loop, event: Accumulation | Store, owner: Unit, backward: bool) -> str:
    if loop.calls_backward and _retains_graph(loop.node):
        effect = "`backward(retain_graph=True)` frees none of them: every iteration's activations stay alive"
    elif backward:
        effect = (
            "after `backward()` the activations are freed, but the autograd nodes chained "
            "through it grow on the host every iteration"
        )
    else:
        effect = "every iteration's activations stay alive (no `backward()` frees them)"
    kind = "for" if type(loop.node) is cst.For else "while"
    if owner is not event.unit:  # a step function's store, in the loop of its caller
        kind = f"`{kind}` loop of `{owner.name}` that calls `{event.unit.name}`"
    else:
        kind = f"`{kind}` loop"
    advice = "accumulate `.item()` or `.detach()`, or run it under `torch.no_grad()`"
    if event.via:  # the chain: the call, and the helper that keeps the value
        call = cst.Module([]).code_for_node(event.node)
        return f"`{call}` keeps autograd history across iterations of this {kind}: {event.via}; {effect}; pass `.item()` or `.detach()`"
    return f"`{root}` accumulates autograd history across iterations of this {kind}: {effect}; {advice}"


def _retains_graph(loop: cst.CSTNode) -> bool:
    """Whether the loop's backward passes keep the graph's buffers (`retain_graph=True`)."""
    return any(callee_name(c) in BACKWARD_CALLS and retain_graph_flag(c) for c in calls_in(loop))
