"""An index as the default profile builds it: the 26 claims of the three papers and the demo that the default runs
decided (`tests/data/paper_claims.json`: their files without the rules' source, inputs, operating characteristics
and provenance, which the index's per-paper answers do not read).

Why: how long the index's per-paper answers run on a phone depends on how many claims each paper has and how long
their words are; the toy site has one claim, so the browser test reads the phone layout on this index instead.
"""

from __future__ import annotations

import json
from pathlib import Path

from actlab import save_claims
from actlab.claim import Claim
from actlab.site.report import SiteConfig, refresh_index

DATA = Path(__file__).parent / "data" / "paper_claims.json"


def paper_claims() -> list[Claim]:
    return [Claim.from_json(item) for item in json.loads(DATA.read_text(encoding="utf-8"))]


def paper_index(root: Path, claims: list[Claim] | None = None) -> Path:
    """The index of `claims` (default: `paper_claims`) built under `root` by the real builder; returns the index
    file."""
    config = SiteConfig(notebooks_dir=root / "notebooks", runs_dir=root / "runs", out_dir=root / "site")
    save_claims(paper_claims() if claims is None else claims, config.runs_dir / "claims")
    return refresh_index(config)
