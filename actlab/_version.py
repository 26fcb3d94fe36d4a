"""actlab's version, in the lowest layer: every module may import it (the package's `__init__` re-exports it).

Why its own module: `actlab/__init__.py` imports the activations, which import most of the package, so a
module that read the version from `actlab` itself would import the whole package and close an import cycle.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("actlab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
