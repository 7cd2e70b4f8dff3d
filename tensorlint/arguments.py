"""The argument parser of every subcommand: a usage error says `tensorlint: error:` and exits 2."""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2  # as ruff: the exit code of a usage error, a missing file or an internal error


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tensorlint: error: {message}\n")
        raise SystemExit(EXIT_USAGE)
