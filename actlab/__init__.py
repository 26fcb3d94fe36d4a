"""actlab: test published claims about activation functions, and your own.

The package is the logic; notebooks under `notebooks/` only call, tabulate and plot.
See README.md for a map of the modules.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from actlab import activations
from actlab.record import record, record_claim

try:
    __version__ = version("actlab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["activations", "record", "record_claim", "__version__"]
