"""The `lamina` command's launcher, outside the package: importing lamina (NumPy and
every module) takes a moment, and a Ctrl-C or SIGTERM in that moment would print Python's
traceback from deep inside an import. Here nothing heavy is imported yet, so the launcher
can catch it and say it in one line."""

from __future__ import annotations

import importlib
import sys


def main() -> int:
    try:
        cli = importlib.import_module("lamina.cli")
    except KeyboardInterrupt:
        print("lamina: interrupted while starting", file=sys.stderr)
        return 130  # as a shell reports SIGINT
    return cli.entry()


if __name__ == "__main__":
    sys.exit(main())
