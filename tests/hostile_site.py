"""A comparison study page built from hostile run records, once per test session (the sanitiser and browser tests).

The records are what `notebooks/compare/run.ipynb` writes, forged as a shared or tampered runs folder could hold
them: an arm named `<img src=x onerror=...>`, derivation formulas that close their code span and hold an `<img>`
or a `<script>`, a device and a data path holding markup. Each payload sets `window.__actlab_injected`, so a browser
can tell whether any ran. The real `notebooks/compare/report.ipynb` reads them and `actlab.notebooks.to_html`
renders the page.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from actlab import notebooks
from actlab.io import atomic_write_json

REPO_ROOT = Path(__file__).resolve().parent.parent
# Quoted handler values: Markdown passes `<img ... onerror="...">` through as HTML (an unquoted value holding "="
# is not valid inline HTML, and Markdown would escape it by itself).
HOSTILE_ARM = '<img src=x onerror="window.__actlab_injected=1">'
HOSTILE_POS = 'x**3` <img src=x onerror="window.__actlab_injected=2"> `'
HOSTILE_NEG = "exp(x)` <script>window.__actlab_injected=3</script> `"
HOSTILE_DEVICE = 'cpu <svg onload="window.__actlab_injected=4"></svg>'
HOSTILE_DATA = '<a href="javascript:window.__actlab_injected=5">MNIST-1D</a>'
_built: Path | None = None


def _arm(activation: str, matching: str, seed: int, value: float) -> dict:
    config = {"lr": 0.003, "schedule": "cosine", "rounds": 2, "grad_clip": 1.0, "fast_path": "eager"}
    return {"activation": activation, "matching": matching, "task": "mnist1d", "seed": seed, "status": "ok",
            "metric": "accuracy", "value": value, "accuracy": value, "train_loss": 1.0, "steps": 15, "samples": 960,
            "tokens": 0, "seconds": 0.05, "throughput": 19200.0 + 100 * seed, "budget_amount": 15 if matching ==
            "steps" else 0.05, "device": HOSTILE_DEVICE, "threads": 1, "config": config}  # fmt: skip


def _forge_runs(runs_dir: Path) -> None:
    sweep = runs_dir / "hostile"
    run_ids = []
    for seed in range(3):
        run_id = f"run{seed}"
        run_ids.append(run_id)
        arms = [
            _arm(name, matching, seed, value + 0.01 * seed)
            for matching in ("steps", "seconds")
            for name, value in (("cubic", 70.0), (HOSTILE_ARM, 60.0 + seed), ("relu", 68.0), ("gelu", 69.0))
        ]
        results = {"arms": arms, "derived": {"cubic": {"pos": HOSTILE_POS, "neg": HOSTILE_NEG, "checks_passed": 6}},
                   "data": HOSTILE_DATA, "task": "mnist1d"}  # fmt: skip
        atomic_write_json(sweep / run_id / "results.json", results)
        atomic_write_json(sweep / run_id / "params.json", {"task": "mnist1d", "seed": seed})
        atomic_write_json(sweep / run_id / "status.json", {"run_id": run_id, "status": "ok"})
    atomic_write_json(sweep / "sweep.json", {"name": "hostile", "run_ids": run_ids})


def hostile_compare_page() -> Path:
    """The rendered HTML page (built once per session into a temporary folder)."""
    global _built
    if _built is None:
        root = Path(tempfile.mkdtemp(prefix="actlab-hostile-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _forge_runs(root / "runs")
        template = REPO_ROOT / "notebooks" / "compare" / "report.ipynb"
        executed = root / "compare.ipynb"
        parameters = {"runs_dir": str(root / "runs"), "sweep_names": "hostile", "claims_dir": str(root / "claims"),
                      "n_simulations": 50}  # fmt: skip
        notebooks.execute(template, executed, parameters, cwd=template.parent)
        _built = notebooks.to_html(executed, root / "compare.html")
    return _built
