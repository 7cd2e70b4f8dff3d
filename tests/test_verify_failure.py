"""How an exception reads in a verdict: one line, type + message + where; no torch needed."""

from __future__ import annotations

from tensorlint.verify.failure import summarise

WORKER_ERROR = """Caught RuntimeError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/venv/torch/utils/data/_utils/worker.py", line 349, in _worker_loop
    data = fetcher.fetch(index)
  File "/home/me/tl003_collate_cuda.py", line 16, in collate
    return images.cuda(), labels.cuda()
  File "/venv/torch/cuda/__init__.py", line 372, in _lazy_init
    raise RuntimeError(
RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
"""


def test_a_forked_workers_traceback_is_summarised_not_printed() -> None:
    text = summarise(RuntimeError(WORKER_ERROR), skip=("/venv/torch",))
    assert text == (
        "DataLoader worker process 0 raised RuntimeError: Cannot re-initialize CUDA in forked subprocess. "
        "To use CUDA with multiprocessing, you must use the 'spawn' start method (tl003_collate_cuda.py:16 in collate)"
    )
    assert "\n" not in text and "Traceback" not in text


def test_the_type_is_named_once() -> None:
    try:
        raise RuntimeError("RuntimeError: Cannot re-initialize CUDA\nsecond line")
    except RuntimeError as error:
        text = summarise(error)
    assert text.startswith("RuntimeError: Cannot re-initialize CUDA (test_verify_failure.py:")
    assert "RuntimeError: RuntimeError" not in text and "second line" not in text


def test_an_exception_without_a_message() -> None:
    try:
        raise MemoryError
    except MemoryError as error:
        assert summarise(error).startswith("MemoryError (test_verify_failure.py:")
