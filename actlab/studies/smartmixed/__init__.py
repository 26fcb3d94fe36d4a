"""The SmartMixed study (arXiv 2510.22450): compute-matched ranking, controls, layer-wise preferences.

Modules: `config` (RunConfig: what one run trains; the 17 architectures; strategy names), `data`
(dataset + stratified subsamples), `assignments` (learned, random, reversed, uniform-mixed
assignments; the argmax network), `protocol` (networks, optimiser, phase budgets, the freeze
point), `run` (one run: every strategy for one seed), `analysis` (tables and tests the report
computes), `layers` (layer-wise preference analysis), `plots`, `paper` (the paper's published
numbers). The notebooks `notebooks/smartmixed/run.ipynb` and `report.ipynb` only call these.
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
