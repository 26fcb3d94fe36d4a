"""The symbols every derivation shares: x (real), beta, alpha_p and alpha_n (positive).

Its own module so that the parser and the recipe, which parses text, need not import each other for them.
"""

from __future__ import annotations

import sympy as sp

x = sp.Symbol("x", real=True)
beta = sp.Symbol("beta", positive=True)
alpha_p = sp.Symbol("alpha_p", positive=True)
alpha_n = sp.Symbol("alpha_n", positive=True)
