"""The zoo's page built from forged run records, once per test session (the zoo page and browser tests).

Why forged: the zoo's runs take an hour (`make zoo`), and even `actlab zoo --smoke` trains every entry. The records
are what `notebooks/zoo/run.ipynb` writes, for eight entries (five of which have a paper claiming to beat ReLU) on
two tasks, step- and compute-time-matched, five seeds; the real `notebooks/zoo/zoo.ipynb` reads them and the site's
page path (`render_study_page`: executed, checked clean, rendered) publishes `zoo.html`.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import numpy as np

from actlab.io import atomic_write_json

REPO_ROOT = Path(__file__).resolve().parent.parent
# entry -> mean test accuracy (points) on every task; spreads differ so some pairs are decided and some are not
MEANS = {"relu": 90.0, "leaky_relu": 90.1, "elu": 91.5, "gelu": 90.6, "silu": 90.5, "mish": 92.5, "softplus": 86.0,
         "golu": 90.2}  # fmt: skip
TASKS = ("digits", "mnist1d")
SEEDS = 5
_built = None


def _arm(task: str, matching: str, seed: int, activation: str, value: float) -> dict:
    return {"task": task, "matching": matching, "seed": seed, "activation": activation, "metric": "test_accuracy",
            "status": "ok", "value": value, "test_accuracy": value, "steps": 300, "samples": 38400, "tokens": 0,
            "seconds": 0.5, "throughput": 7.7e4, "budget_amount": 300 if matching == "steps" else 0.5,
            "device": "cpu", "threads": 1, "config": {"lr": 0.003, "schedule": "cosine", "rounds": 2,
            "grad_clip": 1.0, "fast_path": "function"}}  # fmt: skip


def forge_runs(runs_dir: Path) -> None:
    """One sweep per task under `runs_dir` (a study's `runs/zoo/<profile>`), one run per seed."""
    rng = np.random.default_rng(0)
    for task in TASKS:
        sweep = runs_dir / task
        run_ids = []
        for seed in range(SEEDS):
            run_id = f"seed{seed}"
            run_ids.append(run_id)
            shared = rng.normal(0, 1.0)  # a seed's arms share their data order and start: correlated scores
            arms = [
                _arm(task, matching, seed, name, round(mean + shared + rng.normal(0, 0.3), 3))
                for matching in ("steps", "seconds")
                for name, mean in MEANS.items()
            ]
            results = {"arms": arms, "data": f"{task} (forged)", "derived": {}, "task": task}
            atomic_write_json(sweep / run_id / "results.json", results)
            atomic_write_json(sweep / run_id / "params.json", {"task": task, "seed": seed})
            atomic_write_json(sweep / run_id / "status.json", {"run_id": run_id, "status": "ok"})
        atomic_write_json(sweep / "sweep.json", {"name": task, "run_ids": run_ids})


def zoo_site():
    """(config, page) of the zoo page built into a temporary site folder."""
    global _built
    if _built is None:
        from actlab.commands.site_build import render_study_page
        from actlab.site.report import SiteConfig, refresh_index, study_page

        root = Path(tempfile.mkdtemp(prefix="actlab-zoo-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        parameters = {"sweep_names": ",".join(TASKS), "n_simulations": 40, "n_resamples": 200}
        config = SiteConfig(notebooks_dir=REPO_ROOT / "notebooks", runs_dir=root / "runs", out_dir=root / "site",
                            parameters={"zoo": parameters})  # fmt: skip
        forge_runs(config.runs_dir / "zoo" / config.profile)
        study_dir = config.notebooks_dir / "zoo"
        page = render_study_page(study_page(study_dir, config.profile, "zoo.ipynb"), study_dir, config, "zoo.ipynb")
        refresh_index(config, [page])
        _built = (config, page)
    return _built
