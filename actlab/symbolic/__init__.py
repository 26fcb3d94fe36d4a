"""The xIELU paper's gradient-first recipe, symbolically: text to SymPy, derivation, proofs, torch code (its modules
are listed in docs/package.md).

Layer: above `actlab.kernels`, below `actlab.nn`. SymPy loads at `build_activation`'s first use, so
`import actlab.symbolic.saved` (what `actlab.activations.resolve` needs) stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_activation"]


def __getattr__(name: str) -> Any:
    if name == "build_activation":
        from actlab.symbolic.build import build_activation

        return build_activation
    raise AttributeError(f"module 'actlab.symbolic' has no attribute {name!r}")
