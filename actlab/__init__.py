"""actlab: test published claims about activation functions, and your own (README.md maps the modules).

`actlab.activations` is imported on first use (it imports torch), so the command line starts without it.
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
