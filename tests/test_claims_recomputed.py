"""Claims recomputed, not trusted (issue 59, item 3): a claim file the code does not give back is an error row.

The issue's probes: a hand-edited claim file (verdict set to "supported" beside a CI of [-0.93, 1.63] against its
threshold) was shown as supported, and a forged claim of a study that does not exist showed a "registered
definition". Here claims of the paper's mathematics (study `propositions`, registered, decided by
`actlab.theory.claims`' rules) are written as `save_claims` writes them, then edited or forged, and the index is
built against the checkout's real studies and registry.
"""

from __future__ import annotations

import json
import re

from toy_site import unwrapped

from actlab import registry, save_claims
from actlab.claim import Claim, Evidence, decide
from actlab.commands import published
from actlab.site import verify
from actlab.site.report import SiteConfig, refresh_index
from actlab.theory import claims as theory

TOLERANCE = 1e-6


def _proposition(claim_id: str, ci: tuple[float, float]) -> Claim:
    """A registered claim of the paper's mathematics, decided by its registered rule and stamped by the registry."""
    made = decide(claim_id, Evidence(ci[1], ci, 1, {"tolerance": TOLERANCE}), theory.below_tolerance,
                  study=theory.STUDY, statement="s", source="Flex-Act", units="relative error", budget="SymPy",
                  threshold=TOLERANCE, supports="below")  # fmt: skip
    [stamped] = registry.stamp([made], theory.definitions(), profile="any")
    return stamped


def _edited(path, **changes) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, **changes}), encoding="utf-8")


def _rows(index: str) -> dict[str, str]:
    """Claim id -> its card (`<article>`) or its error row (`<tr>`) in the index."""
    found = re.finditer(r'<(tr|article)\b[^>]*\bid="claim-([^"]+)"[^>]*>(.*?)</\1>', index, re.S)
    return {m.group(2): m.group(3) for m in found}


def test_edited_and_forged_claim_files_are_error_rows_and_an_untouched_one_is_shown(tmp_path):
    claims = tmp_path / "runs" / "claims"
    good = _proposition("propositions-1-prop1", (0.0, 1e-9))
    edited = _proposition("propositions-2-prop2", (-0.93, 1.63))
    redated = _proposition("propositions-3-eq24", (0.0, 1e-9))
    assert good.registration == "registered" and good.fixed_on and edited.verdict == "not supported"
    forged = good.with_changes(claim_id="forged-claim", study="nosuchstudy")
    save_claims([good, edited, redated, forged], claims)
    _edited(claims / "propositions-2-prop2.json", verdict="supported")  # beside [-0.93, 1.63], threshold 1e-6
    _edited(claims / "propositions-3-eq24.json", fixed_on="2020-01-01")  # "registered" long before its runs

    config = SiteConfig(notebooks_dir=tmp_path / "notebooks", runs_dir=tmp_path / "runs", out_dir=tmp_path / "site")
    rows = _rows(unwrapped(refresh_index(config, check=published.check).read_text(encoding="utf-8")))
    assert "claim-error" not in rows["propositions-1-prop1"] and "registered definition" in rows["propositions-1-prop1"]
    for claim_id, why in (
        ("propositions-2-prop2", "its stored verdict &#39;supported&#39; is not what its rule below_tolerance gives"),
        ("forged-claim", "its study &#39;nosuchstudy&#39; does not exist"),
        ("propositions-3-eq24", "it says its definition was fixed on 2020-01-01, the registry on"),
    ):
        assert why in rows[claim_id], rows[claim_id]
        assert "not shown" in rows[claim_id] and "registered definition" not in rows[claim_id]
        assert not re.search(r'class="verdict|>supported<', rows[claim_id])
    document = json.loads((tmp_path / "site" / "claims.json").read_text(encoding="utf-8"))
    assert [claim["claim_id"] for claim in document["claims"]] == ["propositions-1-prop1"]


def rule_of_mine(estimate: float, ci: tuple[float, float], threshold: float) -> str:
    """A user's study's own rule (registered by no study)."""
    return "supported" if ci[0] > threshold else "inconclusive"


def test_a_rule_that_differs_from_the_code_is_refused_and_a_users_own_study_is_shown_marked(tmp_path):
    definition = registry.Definition(
        claim_id="paper-claim", study="paper", kind="experiment", statement="s", units="", threshold=0.0,
        supports="above", margin="none", margin_source="-", alpha=0.05, rules=(theory.below_tolerance,), sweeps=(),
    )  # fmt: skip
    ref = verify.Reference([definition], {}, page_studies=frozenset({"paper", "mine"}))
    text = {"statement": "s", "source": "-", "units": "", "budget": "b"}
    paper = decide("paper-claim", Evidence(0.0, (0.0, 0.0), 1, {"tolerance": 1.0}), theory.below_tolerance,
                   study="paper", **text)  # fmt: skip
    assert verify.recheck(paper, ref) is None and verify.not_rechecked(paper, ref) == ""
    rewritten = paper.with_changes(rule="def below_tolerance(estimate, ci, tolerance):\n    return 'supported'")
    assert "differs from study paper's rule of that name in the code" in verify.recheck(rewritten, ref)
    mine = decide("my-claim", Evidence(1.0, (0.5, 1.5), 4, {"threshold": 0.0}), rule_of_mine, study="mine", **text)
    assert verify.recheck(mine, ref) is None  # shown: nothing in the code to recompute it with ...
    assert "not rechecked: study mine registers no claims" in verify.not_rechecked(mine, ref)  # ... and says so
    claiming = mine.with_changes(fixed_on="2026-01-01", registration="registered", registry_hash="abc")
    assert "the registry has no entry for it" in verify.recheck(claiming, ref)
    assert "does not exist" in verify.recheck(mine.with_changes(study="theirs"), ref)


def test_with_no_readable_registry_a_registered_claim_is_shown_with_its_registration_marked_unchecked():
    claim = _proposition("propositions-1-prop1", (0.0, 1e-9))
    ref = verify.Reference(theory.definitions(), None, "registry.json is unreadable (JSONDecodeError: ...)")
    assert verify.recheck(claim, ref) is None  # its rule still gives its verdict: the site stays whole
    assert verify.caveats(claim, ref) == [
        "registration not checked: registry.json is unreadable (JSONDecodeError: ...)"
    ]
    assert "stored verdict" in verify.recheck(claim.with_changes(verdict="not supported"), ref)
