"""The argument parser of every subcommand (a usage error says `tensorlint: error:` and exits 2),
and the commands that `tensorlint --help` lists."""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2  # as ruff: the exit code of a usage error, a missing file or an internal error

# One line each, as `ruff --help` lists its commands; each command's own `--help` starts with its line.
COMMANDS = {
    "check": "Find leak patterns in files and folders (the default: `tensorlint src/` is `tensorlint check src/`)",
    "verify": "Run the code behind each finding and measure the tensor memory it keeps",
    "rule": "Print a rule's documentation (or every rule's, with --all)",
    "rules": "List every rule: default state and fix availability",
    "server": "Start the language server for editors, on stdio (alias: lsp)",
}


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tensorlint: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def overview() -> str:
    """`tensorlint --help`: the commands, one line each, and where each one's options are."""
    width = max(len(name) for name in COMMANDS)
    commands = "".join(f"  {name.ljust(width)}  {line}\n" for name, line in COMMANDS.items())
    return (
        "tensorlint: find PyTorch memory-leak patterns before the code runs.\n\n"
        "Usage: tensorlint [check] [OPTIONS] [PATH]...\n"
        "       tensorlint <COMMAND> [OPTIONS]\n\n"
        f"Commands:\n{commands}\n"
        "Options:\n"
        "  -h, --help     Print this help\n"
        "  -V, --version  Print the version\n\n"
        "A command's options: `tensorlint <COMMAND> --help` (`tensorlint check --help` for checking).\n"
    )
