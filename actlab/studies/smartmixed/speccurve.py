"""The SmartMixed specification curve: the choices the paper and its code leave open, varied one at a time.

The layer-wise and learned-vs-controls verdicts come from one setting of choices the paper does not pin down or the
CPU profile shortened (phase-1 length, Gumbel mode, tau, the routers' learning rate, dataset, architecture); a verdict
that holds across them says more. The `speccurve_*` sweeps change each alone from that claim's baseline settings.

One run is one seed x every specification, trained in turn in one kernel (start-up costs more than a short phase 1).
Each entry names the `claim` it serves (`layerwise` or `controls`), its `label`, the one `choice` it changes, the
`RunConfig` fields that make it up, and optionally the `seeds` it runs on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from actlab.studies.smartmixed.config import RENAMED, RunConfig, parse_architecture
from actlab.studies.smartmixed.data import StudyData
from actlab.studies.smartmixed.run import load_data, run

CLAIMS = ("layerwise", "controls", "reference", "depthwidth")  # the last two: the `reference` sweep
RESERVED = ("claim", "label", "choice", "seeds")
FIXED_BY_THE_RUN = ("seed", "device", "num_threads", "extra")  # a specification never changes these
FLAT_SUFFIX = ".test_accuracy"  # the per-arm numbers a single run flattens into results.csv; not per specification


def _overrides(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The RunConfig fields an entry sets; it names them as the run notebook does (`strategy`, `batch`, ...)."""
    entry = {RENAMED.get(key, key): value for key, value in entry.items()}
    fields = set(RunConfig.__dataclass_fields__) - set(FIXED_BY_THE_RUN)
    unknown = sorted(set(entry) - fields - set(RESERVED))
    missing = [key for key in ("claim", "label", "choice") if not entry.get(key)]
    if unknown or missing or entry["claim"] not in CLAIMS:
        raise ValueError(
            f"specification {dict(entry)!r}: needs 'claim' ({' or '.join(CLAIMS)}), 'label' and 'choice', and "
            f"RunConfig fields other than {', '.join(FIXED_BY_THE_RUN)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
            + (f" (missing: {', '.join(missing)})" if missing else "")
        )
    values = {key: value for key, value in entry.items() if key in fields}
    if "architecture" in values:
        values["architecture"] = parse_architecture(values["architecture"])
    return values


def validate(specifications: Sequence[Mapping[str, Any]], base: RunConfig) -> list[RunConfig]:
    """Every specification as a validated RunConfig (a typo fails before any training)."""
    labels = [entry.get("label") for entry in specifications]
    if len(set(labels)) != len(labels):
        raise ValueError(f"specification labels must be unique, got {labels}")
    return [replace(base, **_overrides(entry)) for entry in specifications]


def run_specifications(base: RunConfig, specifications: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Train every specification that includes `base.seed` (an entry's optional `seeds`); what `actlab.record`
    stores: one entry per specification with its label, choice and the run's record."""
    configs = validate(specifications, base)
    loaded: dict[tuple[Any, ...], StudyData] = {}
    entries = []
    started = time.perf_counter()
    for entry, config in zip(specifications, configs, strict=True):
        if "seeds" in entry and base.seed not in entry["seeds"]:
            continue
        key = (config.dataset, config.data_seed, config.n_train, config.n_val, config.n_test)
        if key not in loaded:
            loaded[key] = load_data(config)
        record = run(config, loaded[key]).to_record()
        record = {name: value for name, value in record.items() if not name.endswith(FLAT_SUFFIX)}
        entries.append(
            {"claim": entry["claim"], "label": str(entry["label"]), "choice": str(entry["choice"]), **record}
        )
    failed = any(entry["status"] != "ok" for entry in entries)
    return {
        "status": "diverged" if failed else "ok",
        "specifications": entries,
        "n_specifications": len(entries),
        "wall_seconds": time.perf_counter() - started,
    }


@dataclass
class CurveRuns:
    """A spec-curve sweep read back: per label, records shaped like a single sweep's (`load_run_results`)."""

    records: dict[str, dict[str, dict[str, Any]]]  # label -> {run_id: {"results": ...}}
    choice_of: dict[str, str]
    claim_of: dict[str, str]

    def labels(self, claim: str) -> list[str]:
        """The specifications that serve `claim` (layerwise or controls), in the sweep file's order."""
        return [label for label in self.records if self.claim_of[label] == claim]

    def merged(self, claim: str) -> dict[str, dict[str, Any]]:
        """Every record of every specification that serves `claim`, as one sweep's records."""
        return {run_id: record for label in self.labels(claim) for run_id, record in self.records[label].items()}


def from_records(records: Mapping[str, Mapping[str, Any]]) -> CurveRuns:
    """Split each run's specifications into per-label records (run ids '<run>:<label>')."""
    by_label: dict[str, dict[str, dict[str, Any]]] = {}
    choice_of: dict[str, str] = {}
    claim_of: dict[str, str] = {}
    for run_id, entry in records.items():
        for spec in (entry.get("results") or {}).get("specifications", []):
            label = spec["label"]
            choice_of[label], claim_of[label] = spec["choice"], spec["claim"]
            by_label.setdefault(label, {})[f"{run_id}:{label}"] = {"results": spec, "status": spec.get("status")}
    return CurveRuns(by_label, choice_of, claim_of)


def load_curve(runs_dir: str | os.PathLike[str], sweep: str) -> CurveRuns | None:
    """The spec-curve sweep `sweep` under `runs_dir`, or None when this profile has no such sweep."""
    from actlab.sweep import load_run_results

    if not sweep or not (Path(runs_dir) / sweep).is_dir():
        return None
    return from_records(load_run_results(runs_dir, sweep))


def summary_table(record: Mapping[str, Any]) -> Any:
    """One row per specification a spec-curve run trained: its claim, status, commitment and budget used."""
    import pandas as pd

    rows = []
    for spec in record.get("specifications", []):
        phase1 = spec.get("phase1") or {}
        rows.append(
            {
                "claim": spec["claim"],
                "specification": spec["label"],
                "choice": spec["choice"],
                "status": spec["status"],
                "commitment_min": phase1.get("commitment_min"),
                "phase1_steps": phase1.get("steps"),
                "arms": spec.get("n_arms"),
                "seconds": spec.get("wall_seconds"),
            }
        )
    return pd.DataFrame(rows)
