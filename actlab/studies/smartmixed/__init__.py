"""The SmartMixed study (arXiv 2510.22450): compute-matched ranking, controls, layer-wise preferences.

`config` says what one run trains, `run` trains it, `analysis`, `layers`, `preference`, `claims` and `plots` make the
report; `notebooks/smartmixed/run.ipynb` and `report.ipynb` only call these.
"""

from __future__ import annotations

from actlab.studies.smartmixed.config import CONTROLS as CONTROLS
from actlab.studies.smartmixed.config import PAPER_ARCHITECTURES as PAPER_ARCHITECTURES
from actlab.studies.smartmixed.config import RANKED as RANKED
from actlab.studies.smartmixed.config import REPRESENTATIVE as REPRESENTATIVE
from actlab.studies.smartmixed.config import STRATEGIES as STRATEGIES
from actlab.studies.smartmixed.config import RunConfig as RunConfig
from actlab.studies.smartmixed.config import architecture_name as architecture_name
from actlab.studies.smartmixed.config import from_parameters as from_parameters
from actlab.studies.smartmixed.run import Arm as Arm
from actlab.studies.smartmixed.run import RunRecord as RunRecord
from actlab.studies.smartmixed.run import run as run
