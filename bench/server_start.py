"""Time the editor server's cold start: from spawning `tensorlint server` to its `initialize` answer.

    python bench/server_start.py [--runs 10]

What an editor waits for before the first request: the interpreter, the imports and the
`initialize` round trip over stdio (LSP's Content-Length framing). Each run is a fresh process;
the median and the range of the wall-clock times are printed, and the median CPU time of the
whole server process (user + system, until it exits after `shutdown`: steadier than wall time on
a shared machine). `python -X importtime -c "import
tensorlint.server"` says where the time goes.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}


def _message(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_start() -> tuple[float, float]:
    """Seconds from spawning the server to reading its answer to `initialize`, and its CPU seconds."""
    cpu = _children_cpu()
    start = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorlint", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(_message(INITIALIZE))
    server.stdin.flush()
    length = 0
    while line := server.stdout.readline().strip():  # headers, up to the blank line
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    answer = json.loads(server.stdout.read(length))
    elapsed = time.perf_counter() - start
    assert answer.get("id") == 1 and "result" in answer, answer
    server.stdin.write(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    server.stdin.write(_message({"jsonrpc": "2.0", "method": "exit"}))
    server.stdin.close()
    server.wait(timeout=30)
    return elapsed, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    results = [cold_start() for _ in range(parser.parse_args().runs)]
    wall, cpu = [w for w, _ in results], [c for _, c in results]
    print(
        f"initialize answered after {statistics.median(wall):.3f} s (median of {len(wall)}; "
        f"{min(wall):.3f}-{max(wall):.3f} s); server CPU {statistics.median(cpu):.3f} s"
    )


if __name__ == "__main__":
    main()
