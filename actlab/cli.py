"""The `actlab` command line: one module per subcommand under `actlab.commands` (`configure(parser)`, `run(args)`),
so a new one adds a module and a line in `SUBCOMMANDS`. Errors print one line (`--debug`: the traceback); SIGTERM
unwinds as Ctrl-C does (`Terminated`), so a `kill` cleans up workers, kernels and socket folders too.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from actlab._version import __version__
from actlab.errors import Terminated

# name -> (module under actlab.commands, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "derive": ("derive", "derive an integrated-gradient activation symbolically (xIELU, xIPReLU, ...)"),
    "check": ("check", "check Flex-Act's gradient propositions against autograd"),
    "sweep": ("sweep", "run a papermill notebook over a parameter grid and seeds"),
    "report": ("report", "execute the report notebooks and build the HTML site under reports/"),
    "bench": ("bench", "benchmarks: ratios against a baseline measured in one run"),
    "calibrate": ("calibrate", "how often a claim's decision rule errs (simulated at its own n and spread)"),
    "zoo": ("zoo", "the activation zoo: 28 published activations compared under one protocol (reports/zoo.html)"),
    "decide": ("decide", "add seeds in batches until a claim is decided, error rates kept over every look"),
    "registry": ("registry", "check every claim's definition against the committed registry, or register a change"),
}


def build_parser() -> argparse.ArgumentParser:
    """The full parser; subcommand modules are imported here only to add their arguments."""
    parser = argparse.ArgumentParser(
        prog="actlab",
        description="Test published claims about activation functions, and your own.",
    )
    parser.add_argument("--version", action="version", version=f"actlab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub_parser = sub.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(f"actlab.commands.{module_name}")
        module.configure(sub_parser)
        sub_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        with _sigterm_as_interrupt():
            return int(args._run(args) or 0)
    except Terminated:
        print("actlab: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("actlab: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # one line for users; the traceback only on request
        if args.debug:
            raise
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"actlab {args.command}: error: {message}", file=sys.stderr)
        return int(getattr(error, "exit_code", 1))


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises `Terminated` in the main thread (its default ends the process with no
    `finally` run). Only the main thread can set a handler, and a SIGTERM ignored by actlab's parent stays ignored.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(f"signal {signum}")


if __name__ == "__main__":
    sys.exit(main())
