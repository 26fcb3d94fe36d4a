"""The xIELU paper's gradient-first recipe, symbolically: text to SymPy, derivation, proofs, torch code.

- `parser`: the one way text becomes SymPy (an `ast` whitelist; nothing is ever evaluated);
- `recipe`: integrate `alpha * g + beta` per branch, solve the constants, prove properties, LaTeX;
- `derivations`: the built-in derivations (xIELU, xIPReLU, xIEP), user base gradients, `--check`;
- `codegen`: torch code generated from a derivation, and an autograd Function with the symbolic gradient;
- `quadrature`: the numeric path where SymPy finds no closed form, with an error bound;
- `eps`: what each implementation's `expm1(min(x, eps))` clamp does to f and f' at 0;
- `published`: published activations given by their derivative, run through the recipe;
- `saved`: a derivation saved as data and rebuilt as a trainable module.

Layer: above `actlab.kernels`, below `actlab.nn` (whose "function" path uses `codegen`); it imports only
the foundation modules and itself.
"""
