"""Flex-Act's theory, checked: the gradient propositions, their limits, and the scale-bias corollary.

- `propositions`: Prop. 1, Prop. 2, eq. 24 and D.4 as functions (autograd against the closed form in float64),
  and what they do not cover, measured (hard straight-through, a non-detached p_tilde);
- `scale`: Cor. D.3 derived with SymPy and checked by seeded Monte Carlo;
- `checks`: the verdict table behind `actlab check` and `02_propositions.ipynb`, each status computed.

Layer: above `actlab.routing` and `actlab.activations` (it checks them), below the studies and the site.
"""
