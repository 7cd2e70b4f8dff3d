"""Record real model inputs so they can be replayed for export / debugging.

Typical use in a serving worker::

    model = InputRecorder(model, max_records=8)
    ...
    model.dump("/tmp/sample_inputs.pt", save_fn=torch.save)

The recorder is a transparent proxy: attribute access falls through to the
wrapped model, so ``model.eval()`` / ``model.config`` keep working.
"""
import collections
import itertools
import logging
import os
import threading

log = logging.getLogger(__name__)


def _to_host(obj):
    """Detached host copy of tensors inside nested args; other leaves as-is."""
    if hasattr(obj, "detach") and hasattr(obj, "cpu"):
        return obj.detach().cpu()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_host(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_host(v) for k, v in obj.items()}
    return obj


def _describe(obj):
    shape = getattr(obj, "shape", None)
    if shape is not None:
        return "{}{}".format(getattr(obj, "dtype", type(obj).__name__), tuple(shape))
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(_describe(o) for o in obj) + "]"
    if isinstance(obj, dict):
        return "{" + ", ".join("{}: {}".format(k, _describe(v)) for k, v in obj.items()) + "}"
    return type(obj).__name__


class InputRecorder(object):
    """Proxy around a callable model that remembers recent call arguments.

    Args:
        model: the wrapped module / callable.
        max_records: how many of the most recent calls ``dump`` writes out.
        enabled: recording can be toggled at runtime (e.g. from an admin
            endpoint) without unwrapping the model.
    """

    def __init__(self, model, max_records=16, enabled=True):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "max_records", max_records)
        object.__setattr__(self, "enabled", enabled)
        object.__setattr__(self, "_records", collections.deque(maxlen=max_records))
        object.__setattr__(self, "_counter", itertools.count())
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_signatures", set())

    # -- proxy plumbing --------------------------------------------------
    def __getattr__(self, name):
        return getattr(self._model, name)

    def __setattr__(self, name, value):
        if name == "enabled":
            object.__setattr__(self, name, value)
        else:
            setattr(self._model, name, value)

    def __repr__(self):
        return "InputRecorder({!r}, max_records={})".format(self._model, self.max_records)

    # -- recording -------------------------------------------------------
    def _remember(self, args, kwargs):
        sig = _describe((args, kwargs))
        with self._lock:
            call_id = next(self._counter)
            if sig not in self._signatures:
                self._signatures.add(sig)
                log.debug("new input signature at call %d: %s", call_id, sig)
            self._records.append((call_id, _to_host(args), _to_host(dict(kwargs))))

    def __call__(self, *args, **kwargs):
        if self.enabled:
            self._remember(args, kwargs)
        return self._model(*args, **kwargs)

    def recent(self, n=None):
        n = self.max_records if n is None else n
        with self._lock:
            return [(a, kw) for _, a, kw in list(self._records)[-n:]]

    def signatures(self):
        return sorted(self._signatures)

    def dump(self, path, save_fn, n=None):
        """Write the most recent ``n`` calls with ``save_fn(obj, path)``."""
        items = self.recent(n)
        if not items:
            log.warning("InputRecorder.dump: nothing recorded yet")
            return None
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        payload = {
            "calls": [{"args": a, "kwargs": kw} for a, kw in items],
            "signatures": self.signatures(),
        }
        save_fn(payload, path)
        log.info("dumped %d recorded calls to %s", len(items), path)
        return path


def unwrap(model):
    while isinstance(model, InputRecorder):
        model = model._model
    return model
