"""From per-call samples to a verdict. Pure arithmetic: no torch, easy to test.

The rule (research/runtime_verifier.md, section 2.2): confirm only when almost every delta
grows (CPython's `regrtest -R` rule, with tolerance), a robust slope clears a threshold
that scales with what the step allocates, and the second half grows like the first, so
that a bounded cache or a late warm-up is not called a leak. The same test runs on the
number of live tensors with a threshold of one: one more tensor kept per call is a leak
whatever its size; the byte threshold only keeps noise in byte totals out.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from tensorlint.verify.verdict import CONFIRMED, HOST_ONLY, INCONCLUSIVE, NOT_REPRODUCED

MIN_BYTES = 1024  # smaller per-call growth is noise for any real workload
RELATIVE = 0.001  # ...or a thousandth of what one call allocates
DELTA_FRACTION = 0.9
SPLIT_RATIO = 0.5


@dataclass(frozen=True)
class Decision:
    verdict: str
    slope: float
    deltas: tuple[int, ...]
    delta_fraction: float
    split_ratio: float | None
    r2: float | None
    threshold: float
    node_slope: float
    reason: str
    tensor_slope: float = 0.0  # live tensors per call
    basis: str = ""  # what confirmed it: "bytes" or "tensors"


def theil_sen(values: Sequence[float]) -> float:
    """The median of pairwise slopes: one odd sample cannot move it."""
    slopes = [(values[j] - values[i]) / (j - i) for i in range(len(values)) for j in range(i + 1, len(values))]
    return median(slopes) if slopes else 0.0


def r_squared(values: Sequence[float]) -> float | None:
    n = len(values)
    if n < 3:
        return None
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    sxx = sum((i - mean_x) ** 2 for i in range(n))
    sxy = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    syy = sum((v - mean_y) ** 2 for v in values)
    if syy == 0:
        return None
    return (sxy * sxy) / (sxx * syy)


def _grows(values: Sequence[float], floor: float) -> tuple[bool, tuple[int, ...], float, float | None]:
    """Linear growth test: (grows, deltas, fraction of deltas >= floor/2, second/first half slope)."""
    deltas = tuple(int(b - a) for a, b in itertools.pairwise(values))
    if not deltas:
        return False, deltas, 0.0, None
    fraction = sum(1 for d in deltas if d >= floor / 2) / len(deltas)
    half = len(values) // 2
    first, second = theil_sen(values[: half + 1]), theil_sen(values[half:])
    ratio = second / first if first > 0 else None
    slope = theil_sen(values)
    linear = ratio is not None and ratio >= SPLIT_RATIO
    return slope >= floor and fraction >= DELTA_FRACTION and linear, deltas, fraction, ratio


def decide(
    live_bytes: Sequence[int],
    allocated_per_call: float,
    graph_nodes: Sequence[int],
    live_tensors: Sequence[int] = (),
) -> Decision:
    """`live_bytes[i]`, `live_tensors[i]`: the ledger after call i (index 0 is the baseline before the first)."""
    if len(live_bytes) < 4:
        return Decision(INCONCLUSIVE, 0.0, (), 0.0, None, None, 0.0, 0.0, "fewer than 3 measured calls")
    threshold = max(MIN_BYTES, RELATIVE * allocated_per_call)
    values = [float(v) for v in live_bytes]
    grows, deltas, fraction, ratio = _grows(values, threshold)
    slope = theil_sen(values)
    counts = [float(v) for v in live_tensors]
    tensor_slope = theil_sen(counts) if len(counts) >= 4 else 0.0
    node_values = [float(v) for v in graph_nodes]
    node_slope = theil_sen(node_values) if len(node_values) >= 4 else 0.0
    common = (slope, deltas, fraction, ratio, r_squared(values), threshold, node_slope)
    if grows:
        return Decision(CONFIRMED, *common, "", tensor_slope, "bytes")
    if len(counts) >= 4 and slope > 0:
        more, _, count_fraction, count_ratio = _grows(counts, 1.0)
        if more:  # one more tensor kept per call, each below the byte threshold
            by_count = (slope, deltas, count_fraction, count_ratio, r_squared(values), threshold, node_slope)
            return Decision(CONFIRMED, *by_count, "", tensor_slope, "tensors")
    if len(node_values) >= 4 and _grows(node_values, 1.0)[0]:
        return Decision(HOST_ONLY, *common, "autograd graph grows on the host, tensor memory does not", tensor_slope)
    if slope >= threshold:
        why = "growth flattens out (bounded)" if ratio is not None and ratio < SPLIT_RATIO else "growth is irregular"
        return Decision(NOT_REPRODUCED, *common, why, tensor_slope)
    return Decision(NOT_REPRODUCED, *common, "", tensor_slope)
