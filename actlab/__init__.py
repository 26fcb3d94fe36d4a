"""actlab: test published claims about activation functions, and your own.

The package is the logic; notebooks under `notebooks/` only call, tabulate and plot.
See README.md for a map of the modules.
"""

from __future__ import annotations

from actlab import activations
from actlab._legacy_claims import record_claim
from actlab._version import __version__
from actlab.record import record, save_claims

__all__ = ["activations", "record", "record_claim", "save_claims", "__version__"]
