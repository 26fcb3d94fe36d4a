"""The scale bias under a modified method (`flexact.modified`): classification, rule and labelling on known tables.

Why known tables: whether the modified method's sweep reaches unsaturated mass needs training (the report shows
it); what can be checked in milliseconds is what is done with its per-seed tables: an unsaturated table makes the
slope testable and the rule decides it, a saturated one leaves it untestable with no MDE, the claims carry the
modified-method fidelity in a Holm family of their own, and the page block says what changed and that it never
replaces the primary verdicts. Tables: seeds x [mass beyond fit at k = 5, slope on log k, lowest, highest mass].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from actlab.studies.flexact import claims as flexact_claims
from actlab.studies.flexact import designs, modified, scale
from actlab.sweep.spec import load_spec

SWEEPS = Path(__file__).resolve().parent.parent / "notebooks" / "flexact" / "sweeps"
SETTINGS = flexact_claims.ClaimSettings(n_simulations=20, seed=3)

# five seeds: the mass off the ceiling over k (0.78-0.97) and growing (slope ~0.03 per log k)
GROWING = np.array(
    [
        [0.95, 0.025, 0.80, 0.96],
        [0.94, 0.030, 0.78, 0.95],
        [0.97, 0.022, 0.85, 0.97],
        [0.96, 0.028, 0.82, 0.97],
        [0.95, 0.034, 0.79, 0.96],
    ]
)
# the same slopes, but the mass within 0.05 of 1 at every k: the registered design's Sigmoid case
PINNED = np.column_stack([np.full(5, 0.995), GROWING[:, 1], np.full(5, 0.99), np.full(5, 0.998)])
# Tanh-like: most mass at small k, almost none at k = 5, falling
FALLING = np.array(
    [
        [0.03, -0.16, 0.02, 0.94],
        [0.04, -0.15, 0.02, 0.91],
        [0.06, -0.12, 0.04, 0.73],
        [0.03, -0.16, 0.02, 0.93],
        [0.04, -0.15, 0.03, 0.91],
    ]
)


def _claims(sigmoid: np.ndarray, tanh: np.ndarray) -> list:
    texts = flexact_claims._texts("a test budget", [0.03, 20.0], "")
    tables = {
        "flexact-1-scale-bias-sigmoid-modified-method": sigmoid,
        "flexact-1-scale-bias-tanh-modified-method": tanh,
    }
    return flexact_claims.modified_claims(tables, texts, SETTINGS, first_index=6)


@pytest.fixture(scope="module")
def decided() -> list:
    """The two claims from the growing Sigmoid-like and the falling Tanh-like table (built once: ~0.5 s)."""
    return _claims(GROWING, FALLING)


def test_an_unsaturated_table_makes_the_trend_testable_and_the_rule_decides_it(decided: list) -> None:
    sigmoid, tanh = decided
    assert modified.unsaturated_range(GROWING) == (0.78, 0.97, "")
    assert not any(part.untestable for part in sigmoid.parts)
    assert sigmoid.verdict == "supported" and sigmoid.mde is not None  # mass > 0.5 and slope > 0 at 95%
    assert tanh.verdict == "not supported"  # the mass and its slope lie below, at 97.5%
    slope = sigmoid.parts[1]
    assert slope.ci[0] > 0 and slope.estimate == pytest.approx(GROWING[:, 1].mean())


def test_a_saturated_table_leaves_the_trend_untestable_with_no_mde() -> None:
    sigmoid, _ = _claims(PINNED, FALLING)
    assert modified.unsaturated_range(PINNED)[2] == "high"
    assert [bool(part.untestable) for part in sigmoid.parts] == [False, True]
    assert sigmoid.verdict == "inconclusive" and sigmoid.mde is None


def test_the_claims_are_a_modified_method_outside_the_studys_family(decided: list) -> None:
    found = decided
    assert [claim.claim_id for claim in found] == [design.claim_id for design in modified.all_designs()]
    primary = {design.claim_id for design in designs.all_designs()}
    for claim in found:
        assert claim.claim_id not in primary  # never on the curve nor in the study's Holm family
        assert claim.fidelity.level == "modified-method" and "learning rate 0.01" in claim.fidelity.detail
        assert claim.family.startswith(modified.FAMILY) and "Holm over 2" in claim.family
        assert claim.kind == "experiment" and claim.operating.scenario("null boundary").n_simulations == 20
        assert modified.LABEL in claim.title
    registered = {d.claim_id: d for d in flexact_claims.definitions()}
    for claim in found:
        assert registered[claim.claim_id].sweeps == (modified.SECTION,)


def test_the_page_block_is_labelled_says_what_changed_and_never_replaces_the_primary_verdicts(decided: list) -> None:
    found = decided
    tables = {found[0].claim_id: GROWING, found[1].claim_id: FALLING}
    text = modified.markdown(found, tables, {found[0].claim_id: ["a rate line"]}, "Scale bias, sigmoid: inconclusive")
    assert text.startswith(f"### {modified.HEADING}")
    assert "a modified method (sensitivity analysis)" in text.lower()
    assert modified.changed_text() in text and "never replaces the primary verdicts" in text
    assert "Scale bias, sigmoid: inconclusive" in text and "not in the study's Holm family" in text
    assert "post hoc" in text and "a rate line" in text
    assert text.count("**supported** under the modified method") == 1
    assert text.count("**not supported** under the modified method") == 1
    assert "unsaturated: the trend is testable" in text
    assert "was not run" in modified.markdown([], {}, {}, "")


def test_the_sweep_changes_exactly_what_the_page_says() -> None:
    for profile in ("default", "full"):
        primary = load_spec(SWEEPS / profile / "scale.yml").fixed
        changed = load_spec(SWEEPS / profile / "scale_modified.yml").fixed
        for setting, (registered, value) in modified.CHANGED.items():
            assert primary[setting] == registered and changed[setting] == value
        same = ("epochs", "batch_size", "n_train", "x1_distribution", "tau_schedule", "model")
        assert {key: changed[key] for key in same} == {key: primary[key] for key in same}
        assert set(changed["ground_truth"]) == set(scale.BOUNDED_TRUTHS)
        assert changed["alpha"] in (0.0, [0.0])


def test_the_specification_curve_reads_only_the_studys_own_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modified method's sweep runs at another learning rate: were it a main sweep, the curve would find the
    main sweeps' baselines disagreeing and refuse them all."""
    seen: dict = {}

    def capture(main: dict, curve_sweep: object, found_designs: object) -> None:
        seen.update(main)
        raise RuntimeError("captured")

    monkeypatch.setattr(flexact_claims.specification, "build_curve", capture)
    data = dict.fromkeys((*flexact_claims.SECTIONS, modified.SECTION), object())
    with pytest.raises(RuntimeError, match="captured"):
        flexact_claims.curve_of(data)
    assert set(seen) == set(flexact_claims.SECTIONS) - {"speccurve"}
