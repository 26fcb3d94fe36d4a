"""The index's claims as downloads: `claims.json` (every claim whole, as `Claim.to_json` writes it) and `claims.csv`.

Why: a reader who wants to re-analyse or cite the verdicts should not scrape HTML. A CSV text cell that a spreadsheet
would run as a formula is prefixed with an apostrophe (`actlab.spreadsheet.neutralise_cell`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from actlab.claim import Claim
from actlab.io import atomic_write_text
from actlab.site.inputs import UnreadableClaim
from actlab.site.summary import reported
from actlab.spreadsheet import LINE_END, neutralise_cell

# `verdict` is one of actlab.claim.VERDICTS (the primary verdict); `counted_as` adds "not after family-wise
# control"; `robustness` is one of actlab.claim.ROBUSTNESS_STATUSES; `depends_on` lists the settings (if any) whose
# adequately powered, family-controlled verdict contradicts the primary one, separated by " | ". `finding` is the
# claim's one plain sentence; `fidelity` one of actlab.claim.FIDELITY_LEVELS (empty: untagged), `fidelity_detail`
# what was reduced or changed.
CSV_COLUMNS = (
    "claim_id", "study", "kind", "title", "verdict", "finding", "fidelity", "fidelity_detail", "counted_as",
    "survives_family", "p_value", "deciding_test",
    "p_adjusted", "family", "robustness", "depends_on", "robustness_p", "adequate_specifications",
    "agreeing_specifications", "too_small_specifications", "registry_hash", "fixed_on", "post_hoc",
    "post_hoc_reason", "estimate", "ci_low", "ci_high", "confidence", "units", "mde", "equivalence_margin",
    "threshold", "supports", "paper_value", "n", "budget", "hardware", "false_decisive_rate", "false_decisive_se",
    "power_at_mde", "power_at_mde_se", "power_at_paper", "power_at_paper_se", "statement", "source", "paper",
    "evidence_page",
)  # fmt: skip
CLAIM_FIELDS = frozenset(field.name for field in fields(Claim))


def claim_row(claim: Claim) -> dict[str, Any]:
    """One claim as a flat row of `CSV_COLUMNS`."""
    operating = claim.operating
    false_rate = operating.false_decisive_rate if operating else None
    at_mde = operating.power_at("MDE, supporting") if operating else None
    at_paper = operating.power_at("paper's effect") if operating else None
    robustness = claim.robustness
    return {
        **{name: getattr(claim, name) for name in CSV_COLUMNS if name in CLAIM_FIELDS},
        "ci_low": claim.ci[0],
        "ci_high": claim.ci[1],
        "false_decisive_rate": false_rate[0] if false_rate else None,
        "false_decisive_se": false_rate[1] if false_rate else None,
        "power_at_mde": at_mde[0] if at_mde else None,
        "power_at_mde_se": at_mde[1] if at_mde else None,
        "power_at_paper": at_paper[0] if at_paper else None,
        "power_at_paper_se": at_paper[1] if at_paper else None,
        "counted_as": reported(claim),
        "fidelity": claim.fidelity.level if claim.fidelity else None,
        "fidelity_detail": claim.fidelity.detail if claim.fidelity else None,
        "robustness": robustness.status if robustness else None,
        "depends_on": " | ".join(c.label for c in robustness.contradicting) if robustness else None,
        "robustness_p": robustness.p if robustness else None,
        "adequate_specifications": len(robustness.adequate) if robustness else None,
        "agreeing_specifications": len(robustness.agreeing) if robustness else None,
        "too_small_specifications": len(robustness.too_small) if robustness else None,
    }


def _cell(value: Any) -> Any:
    return "" if value is None else neutralise_cell(value)


def claims_csv(claims: Sequence[Claim]) -> str:
    """The CSV text: a header of `CSV_COLUMNS`, then one row per claim."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator=LINE_END)
    writer.writeheader()
    for claim in claims:
        writer.writerow({name: _cell(value) for name, value in claim_row(claim).items()})
    return buffer.getvalue()


def write_downloads(claims: Sequence[Claim | UnreadableClaim], out_dir: Path) -> tuple[Path, Path]:
    """Write `claims.json` and `claims.csv` into `out_dir` (atomically); unreadable files are listed in the JSON."""
    readable = [claim for claim in claims if isinstance(claim, Claim)]
    unreadable = [{"file": c.file, "error": c.error} for c in claims if isinstance(c, UnreadableClaim)]
    document = {"claims": [claim.to_json() for claim in readable], "unreadable": unreadable}
    json_path = atomic_write_text(Path(out_dir) / "claims.json", json.dumps(document, indent=1, allow_nan=False))
    csv_path = atomic_write_text(Path(out_dir) / "claims.csv", claims_csv(readable))
    return json_path, csv_path
