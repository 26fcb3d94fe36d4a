"""The xIELU paper's gradient-first recipe, symbolically: text to SymPy, derivation, proofs, torch code.

- `parser`: the one way text becomes SymPy (an `ast` whitelist; nothing is ever evaluated);
- `recipe`: integrate `alpha * g + beta` per branch, solve the constants, prove properties, LaTeX;
- `build`: `build_activation(pos, neg)`, the one place that decides "closed form, else quadrature";
- `derivations`: the built-in derivations (xIELU, xIPReLU, xIEP), user base gradients, `--check`;
- `codegen`: torch code generated from a derivation, and an autograd Function with the symbolic gradient;
- `stable`: softplus and sigmoid as torch's stable functions in generated code (no exp overflow far out);
- `derived_spec`: a closed-form derivation's compiled kernels and its trainable module;
- `trainable`: the softplus-parameterised scales alpha_p, alpha_n and fixed beta those modules share;
- `quadrature`: the numeric path where SymPy finds no closed form, with an error bound;
- `eps`: what each implementation's `expm1(min(x, eps))` clamp does to f and f' at 0;
- `published`: published activations given by their derivative, run through the recipe;
- `saved`: a derivation saved as data and rebuilt as a trainable module.

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
