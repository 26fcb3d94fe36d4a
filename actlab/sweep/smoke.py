"""Smoke runs: a sweep cut to tiny runs with its real shapes and parameters, to find what breaks before hours do.

Why: the full profile is what a user with a GPU box runs for hours, and a page that cannot render from its runs
(a report notebook reading a sweep the profile does not have, a plot that assumes long runs) used to show up
only at the end. A smoke sweep keeps everything the sweep's notebook is given (architectures, widths, data) for
the grid's first cell, except the budget, which the spec's `smoke:` mapping cuts down. It runs that cell for two
seeds, not one: the reports' paired tests and intervals need two values, and with one seed every page stopped at
its first statistic, which tested nothing else. Its runs go to their own runs folder (`actlab report --smoke`:
`runs/smoke/`), never mixed with the real ones.
"""

from __future__ import annotations

import dataclasses

from actlab.errors import ActlabError
from actlab.sweep.spec import SweepSpec

SMOKE_SEEDS = 2  # the fewest a report's paired tests and intervals accept: with one, every page stops at its first


def smoke_spec(spec: SweepSpec, seeds: int = SMOKE_SEEDS) -> SweepSpec:
    """The smoke version of `spec`: the first value of every grid axis, the first `seeds` seeds, `spec.smoke` applied.

    A `smoke` key that names a grid axis replaces that axis. A spec without `smoke:` is refused: running one of
    its runs at the real budget would not be a smoke test.
    """
    if not spec.smoke:
        raise ActlabError(
            f"{spec.path}: no 'smoke:' overrides; add the parameters that cut one run to seconds "
            "(e.g. 'smoke: {epochs: 1}') so that 'actlab report --smoke' can run it"
        )
    grid = {key: [values[0]] for key, values in spec.grid.items() if key not in spec.smoke}
    fixed = {**spec.fixed, **spec.smoke}
    return dataclasses.replace(spec, grid=grid, fixed=fixed, seeds=spec.seeds[:seeds])
