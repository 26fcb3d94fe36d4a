"""actlab: test published claims about activation functions, and your own.

The package is the logic; notebooks under `notebooks/` only call, tabulate and plot.
See README.md for a map of the modules.

`actlab.activations` is imported on first use (it imports torch, a second or more), so the command line and
`actlab.record` start without it; `actlab.activations` and `from actlab import activations` work as before.
"""

from __future__ import annotations

from typing import Any

from actlab._version import __version__
from actlab.record import record, save_claims

__all__ = ["activations", "record", "save_claims", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "activations":
        import importlib

        return importlib.import_module("actlab.activations")
    raise AttributeError(f"module 'actlab' has no attribute {name!r}")
