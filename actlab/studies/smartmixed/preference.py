"""The preference sweep read back: did the routers commit, and which activation each layer chose.

The layer-wise claim needs routers that have left uniform, which takes far longer than the compare sweep's phase 1
(docs/smartmixed.md), so this sweep runs phase 1 only and records `commitment_by_layer`. A run whose minimum over
layers is below `COMMITTED` has not chosen: it is listed as such and left out of every test. Frames: `runs` (one row
per run) and `layers` (one row per network x layer x choice), the shape `actlab.stats.group_share_by_layer` takes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from actlab import stats
from actlab.routing.smartmixed import SMARTMIXED_POOL
from actlab.studies.smartmixed.run import COMMITTED

CELL = ("dataset", "architecture")  # the unit results are reported in; never pooled without a heterogeneity test


@dataclass
class Preference:
    runs: pd.DataFrame  # one row per run that recorded a phase 1
    layers: pd.DataFrame  # one row per (network, layer, choice), with the network's `committed` flag
    budget: str

    @property
    def committed_layers(self) -> pd.DataFrame:
        """The rows every test uses: networks whose routers committed in every layer."""
        return self.layers[self.layers.committed]


def from_records(records: dict[str, dict[str, Any]]) -> Preference:
    """Frames from {run_id: {"results": ...}} (what `actlab.sweep.load_run_results` returns)."""
    run_rows, layer_rows, budgets = [], [], []
    for run_id, entry in records.items():
        results = entry.get("results") or {}
        phase1 = results.get("phase1") or {}
        if "commitment_by_layer" not in phase1:
            continue
        data, config = results["data"], results["config"]
        base = {
            "network": run_id,
            "dataset": data["dataset"],
            "architecture": data["architecture"],
            "seed": int(config["seed"]),
        }
        widths = data.get("widths") or []
        commitment = [float(v) for v in phase1["commitment_by_layer"]]
        committed = min(commitment) >= COMMITTED
        run_rows.append(
            {
                **base,
                "layers": len(commitment),
                "commitment_min": min(commitment),
                "commitment_by_layer": commitment,
                "commitment_mean": float(np.mean(commitment)),
                "committed": committed,
                "steps": int(phase1.get("steps", 0)),
                "width_profile": width_profile(widths),
                "test_accuracy": phase1.get("test_accuracy"),
            }
        )
        budgets.append(str(data.get("budget", "")))
        n_layers = len(phase1["counts"])
        for layer, counts in enumerate(phase1["counts"]):
            depth = layer / (n_layers - 1) if n_layers > 1 else 0.0
            for choice in SMARTMIXED_POOL:
                layer_rows.append(
                    {
                        **base,
                        "committed": committed,
                        "layer": layer,
                        "n_layers": n_layers,
                        "depth": depth,
                        "choice": choice,
                        "count": int(counts.get(choice, 0)),
                    }
                )
    if not run_rows:
        raise ValueError("no preference run recorded commitment_by_layer; check the sweep's failed runs (load_status)")
    runs = pd.DataFrame(run_rows).sort_values([*CELL, "seed"]).reset_index(drop=True)
    layers = pd.DataFrame(layer_rows, columns=[*base, "committed", "layer", "n_layers", "depth", "choice", "count"])
    return Preference(runs, layers, " / ".join(dict.fromkeys(budgets)))


def load(runs_dir: str | os.PathLike[str], sweep: str = "preference") -> Preference:
    from actlab.sweep import load_run_results

    return from_records(load_run_results(runs_dir, sweep))


def network_changes(layers: pd.DataFrame, group: tuple[str, ...]) -> pd.DataFrame:
    """Per committed network: its cell and the fitted change of `group`'s share, first to last layer."""
    shares = stats.group_share_by_layer(layers, group)
    trends = stats.network_trends(shares)
    cells = layers.drop_duplicates("network").set_index("network")[[*CELL, "seed"]]
    return trends.join(cells, on="network")


def stacked_shares(layers: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per (cell, layer, choice): the mean share over networks and its t CI over networks (seed level)."""
    totals = layers.groupby(["network", "layer"])["count"].transform("sum")
    frame = layers.assign(share=layers["count"] / totals)
    rows = []
    for key, block in frame.groupby([*CELL, "layer", "choice"], sort=False):
        values = block.share.to_numpy()
        if len(values) >= 2:
            interval = stats.t_interval(values, confidence=confidence)
            mean, low, high = interval.estimate, interval.low, interval.high
        else:  # one network: a share, no interval
            mean, low, high = float(values[0]), float("nan"), float("nan")
        rows.append(
            {
                **dict(zip([*CELL, "layer", "choice"], key, strict=True)),
                "share": mean,
                "low": low,
                "high": high,
                "n": len(block),
            }
        )
    return pd.DataFrame(rows)


def width_profile(widths: list[int] | tuple[int, ...]) -> str:
    """'constant', 'growing' or 'shrinking' (the paper's networks) hidden widths from the first layer to the last;
    'mixed' otherwise, '' when unknown."""
    steps = [b - a for a, b in zip(widths, widths[1:], strict=False)]
    if not steps:
        return ""
    if all(step == 0 for step in steps):
        return "constant"
    if all(step >= 0 for step in steps):
        return "growing"
    if all(step <= 0 for step in steps):
        return "shrinking"
    return "mixed"
