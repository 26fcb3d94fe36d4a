"""Record `data/recorded_runs` (for `test_recorded_claims`) from a runs folder a default `make report` left.

    python tests/record_runs.py RUNS_DIR [STUDY ...]   (default: compare flexact smartmixed xielu)

Why a script: a change that alters an answer on purpose (issue AE) re-records, rather than edit numbers by hand. For
each study it runs `claims.from_runs` on RUNS_DIR/<study>/default, keeps the files that call opens (an audit hook),
writes them as compact JSON (without row keys no claim reads, and with the checkout's path as /checkout), and takes
the expected fields from the claim files that report published (RUNS_DIR/claims).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).parent / "data" / "recorded_runs"
STUDIES = ("compare", "flexact", "smartmixed", "xielu")
UNREAD_ROW_KEYS = ("trajectory", "trajectory_epochs", "probe")  # Flex-Act's per-epoch history and diagnostics
FIELDS = ("verdict", "primary_verdict", "estimate", "ci", "p_value", "p_adjusted", "survives_family", "n", "threshold")
PART_FIELDS = ("name", "estimate", "ci", "threshold", "supports", "margin", "untestable")


def files_read(runs_dir: Path, study: str) -> list[Path]:
    """The files under RUNS_DIR/<study>/default that the study's `from_runs` opens."""
    folder = str((runs_dir / study / "default").resolve())
    found: set[str] = set()

    def hook(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            if path.startswith(folder):
                found.add(path)

    sys.addaudithook(hook)  # hooks cannot be removed: `folder` differs per study, so each sees its own
    importlib.import_module(f"actlab.studies.{study}.claims").from_runs(
        runs_dir / study / "default", n_simulations=5, seed=0
    )
    return sorted(Path(path) for path in found)


def compact(path: Path, checkout: str) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    if path.name == "results.json" and isinstance(data, dict) and isinstance(data.get("rows"), list):
        data["rows"] = [{k: v for k, v in row.items() if k not in UNREAD_ROW_KEYS} for row in data["rows"]]
    text = json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n"
    return text.replace(f'"{checkout}"', '"/checkout"').replace(f"{checkout}/", "/checkout/")


def expected(claims_dir: Path, study: str) -> dict:
    found = {}
    for path in sorted(claims_dir.glob(f"{study}-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("study") == study:
            found[data["claim_id"]] = {key: data[key] for key in FIELDS} | {
                "parts": [{key: part[key] for key in PART_FIELDS} for part in data["parts"]]
            }
    return found


def main(runs_dir: Path, studies: list[str]) -> None:
    runs_dir = runs_dir.resolve()
    checkout = str(runs_dir.parent)  # run records name the checkout's notebooks and sweeps by absolute path
    claims = {}
    for study in studies:
        shutil.rmtree(HERE / study, ignore_errors=True)
        for path in files_read(runs_dir, study):
            out = HERE / path.relative_to(runs_dir)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(compact(path, checkout), encoding="utf-8")
        claims[study] = expected(runs_dir / "claims", study)
    (HERE / "expected_claims.json").write_text(json.dumps(claims, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:] or list(STUDIES))
