"""actlab's version, in the lowest layer, so reading it never imports the package (an import cycle)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("actlab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
