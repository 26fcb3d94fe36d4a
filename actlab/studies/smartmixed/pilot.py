"""The pilot behind the layer-wise claim's power analysis: a few reference-procedure networks, timed, on seeds the
registered `reference` sweep never uses (1000 and up), so the confirmatory runs are not the pilot's.

    python -m actlab.studies.smartmixed.pilot --seeds 1000 1001 1002 1003 --out pilot.jsonl

trains one network per (cell, seed) at the settings of `sweeps/default/reference.yml` on one thread and appends each
record with its training CPU-seconds; `summary` reads them back into the figures `power.PILOT` records.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from actlab.studies.smartmixed import power, preference
from actlab.studies.smartmixed.config import from_parameters
from actlab.studies.smartmixed.run import load_data, run

CELLS = (("fashion_mnist", "512-256-128"), ("mnist5k", "512-256-128"))
REFERENCE = {  # the reference code's procedure at the default profile's scale (sweeps/default/reference.yml)
    "width_scale": 0.5,
    "strategy": "smartmixed",
    "phase1_only": True,
    "budget": "epochs",
    "total": 50,
    "mode": "reference",
    "tau": 0.3,
    "lr": 0.001,
    "router_lr_scale": 1,
    "batch": 128,
    "grad_clip": 1.0,
    "n_train": 2000,
    "n_val": 500,
    "n_test": 500,
    "data_seed": 0,
    "device": "cpu",
    "num_threads": 1,
}


def train(cells: tuple[tuple[str, str], ...], seeds: list[int], out: Path) -> None:
    """One network per (cell, seed), each record appended to `out` (JSON lines) with its training CPU-seconds."""
    for dataset, architecture in cells:
        config = None
        for seed in seeds:
            config = from_parameters(**REFERENCE, dataset=dataset, architecture=architecture, seed=seed)
            data = load_data(config)
            started = time.process_time()
            record = run(config, data).to_record()
            entry = {"cpu_seconds": time.process_time() - started, "results": record}
            with out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")


def summary(path: Path) -> dict[str, Any]:
    """The pilot's figures: per cell the two components' means and SDs, the within-cell pooled SD `power.pilot_sd`
    reads, the mean commitment and the training CPU-seconds."""
    from actlab.studies.smartmixed.claims import layer_values

    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = {f"pilot{i}": {"results": entry["results"]} for i, entry in enumerate(entries)}
    pref = preference.from_records(records)
    cells = {}
    for (dataset, architecture), block in pref.runs.groupby(list(preference.CELL), sort=False):
        cells[f"{dataset} / {architecture}"] = layer_values(pref.layers[pref.layers.network.isin(block.network)])[0]
    pooled = np.concatenate(list(cells.values()))
    return {
        "networks": len(pooled),
        "within_cell_sd": power.pilot_sd(cells),
        "mean": pooled.mean(axis=0).tolist(),
        "per_cell": {
            label: {"mean": v.mean(axis=0).tolist(), "sd": v.std(axis=0, ddof=1).tolist()} for label, v in cells.items()
        },
        "commitment": float(pref.runs.commitment_mean.mean()),
        "cpu_seconds": [round(entry["cpu_seconds"], 1) for entry in entries],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1000, 1001, 1002, 1003])
    parser.add_argument("--out", type=Path, default=Path("pilot.jsonl"))
    parser.add_argument("--summary", action="store_true", help="only summarise --out")
    args = parser.parse_args()
    if not args.summary:
        train(CELLS, args.seeds, args.out)
    print(json.dumps(summary(args.out), indent=1))


if __name__ == "__main__":
    main()
