"""The symbols every derivation shares: x (real), beta, alpha_p and alpha_n (positive).

Why its own module: the parser reads text into expressions over x, and the recipe parses text it is given;
with the symbols here, neither of the two imports the other's module to get them.
"""

from __future__ import annotations

import sympy as sp

x = sp.Symbol("x", real=True)
beta = sp.Symbol("beta", positive=True)
alpha_p = sp.Symbol("alpha_p", positive=True)
alpha_n = sp.Symbol("alpha_n", positive=True)
