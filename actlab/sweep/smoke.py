"""Smoke runs: a sweep cut to tiny runs with its real shapes and parameters, to find what breaks before hours do.

Why: a page that cannot render from a profile's runs should fail in seconds, not after hours. A smoke sweep keeps
everything the notebook is given (architectures, widths, data) for the grid's first cell, except the budget,
which the spec's `smoke:` mapping cuts down. It runs two seeds, the fewest the reports' paired tests and intervals
accept. Its runs go to their own folder (`actlab report --smoke`: `runs/smoke/`), never mixed with the real ones.
"""

from __future__ import annotations

import dataclasses

from actlab.errors import ActlabError
from actlab.sweep.spec import SweepSpec

SMOKE_SEEDS = 2  # the fewest a report's paired tests and intervals accept


def smoke_spec(spec: SweepSpec, seeds: int = SMOKE_SEEDS) -> SweepSpec:
    """The smoke version of `spec`: the first value of every grid axis, the first `seeds` seeds, `spec.smoke` applied
    (a `smoke` key that names a grid axis replaces it). A spec without `smoke:` is refused: it would run at the real
    budget."""
    if not spec.smoke:
        raise ActlabError(
            f"{spec.path}: no 'smoke:' overrides; add the parameters that cut one run to seconds "
            "(e.g. 'smoke: {epochs: 1}') so that 'actlab report --smoke' can run it"
        )
    grid = {key: [values[0]] for key, values in spec.grid.items() if key not in spec.smoke}
    fixed = {**spec.fixed, **spec.smoke}
    return dataclasses.replace(spec, grid=grid, fixed=fixed, seeds=spec.seeds[:seeds])
