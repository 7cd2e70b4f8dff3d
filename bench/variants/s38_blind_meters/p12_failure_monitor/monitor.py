import collections
import logging
import time

logger = logging.getLogger(__name__)


class TrainingMonitor(object):
    """Keeps per-run statistics about updates: how many succeeded, which were
    skipped and why, and throughput."""

    def __init__(self, max_consecutive_failures=20):
        self.max_consecutive_failures = max_consecutive_failures
        self.num_updates = 0
        self.num_tokens = 0
        self.skipped_steps = []
        self.failures = []
        self._consecutive = 0
        self._start = time.time()

    def on_success(self, step, stats):
        self.num_updates += 1
        self.num_tokens += stats.get("ntokens", 0)
        self._consecutive = 0

    def on_failure(self, step, exc):
        self.skipped_steps.append(step)
        self.failures.append(exc)  # leak
        self._consecutive += 1
        logger.warning("skipping update %d: %s: %s", step, type(exc).__name__, exc)
        if self._consecutive >= self.max_consecutive_failures:
            raise RuntimeError(
                "%d consecutive failed updates, giving up" % self._consecutive
            ) from exc

    def words_per_second(self):
        return self.num_tokens / max(time.time() - self._start, 1e-6)

    def summary(self):
        by_type = collections.Counter(type(e).__name__ for e in self.failures)
        return {
            "updates": self.num_updates,
            "skipped": len(self.skipped_steps),
            "skipped_by_type": dict(by_type),
            "wps": round(self.words_per_second(), 1),
        }
