"""The SmartMixed study (arXiv 2510.22450): compute-matched ranking, controls, layer-wise preferences.

`config` says what one run trains, `run` trains it, `analysis`, `layers`, `preference`, `claims` and `plots` make the
report; `notebooks/smartmixed/run.ipynb` and `report.ipynb` only call these.
"""

from __future__ import annotations

from actlab.studies.smartmixed.config import (
    CONTROLS,
    PAPER_ARCHITECTURES,
    RANKED,
    REPRESENTATIVE,
    STRATEGIES,
    RunConfig,
    architecture_name,
    from_parameters,
)
from actlab.studies.smartmixed.run import Arm, RunRecord, run

__all__ = [
    "CONTROLS",
    "PAPER_ARCHITECTURES",
    "RANKED",
    "REPRESENTATIVE",
    "STRATEGIES",
    "Arm",
    "RunConfig",
    "RunRecord",
    "architecture_name",
    "from_parameters",
    "run",
]
