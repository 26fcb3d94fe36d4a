"""Every claim's headline figure draws the quantity its rule decides: read back from the figure itself, the drawn
interval, threshold, band and paper value are the claim's (issue Z, item 3)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from actlab.claim import Claim, Part
from actlab.site import forest, headline

matplotlib.use("Agg")

BASE = dict(study="s", statement="x", source="", budget="", rule="r", rule_name="r")


def _claim(claim_id: str, **fields) -> Claim:
    values = {"title": claim_id, "units": "u", "n": 10, "estimate": 0.5, "ci": (0.2, 0.8), "verdict": "supported",
              **BASE, **fields}  # fmt: skip
    return Claim(claim_id=claim_id, **values)


CLAIMS = [
    # one part from the estimate, a threshold and the paper's value (a rate against 0.8)
    _claim("rate", estimate=0.32, ci=(0.195, 0.467), threshold=0.8, supports="above", paper_value=0.95,
           verdict="not supported"),
    # two parts, the paper's value on the part that is the claim's estimate (scale bias beyond fit)
    _claim("scale", estimate=0.997, ci=(0.995, 0.999), threshold=0.5, supports="above", paper_value=0.78,
           verdict="inconclusive", mde=0.05, parts=(
               Part("mass beyond fit", 0.997, (0.995, 0.999), 0.5, "above", "mass"),
               Part("slope", 0.01, (-0.01, 0.03), 0.0, "above", "per log k"))),
    # lower is better, several parts, the paper's value on the second (its estimate is the claim's)
    _claim("xielu", estimate=-0.001, ci=(-0.02, 0.018), threshold=0.0, supports="below", paper_value=-0.004,
           verdict="inconclusive", mde=0.03, parts=(
               Part("xIELU - ReLU2", -0.01, (-0.03, 0.01), 0.0, "below", "bits/byte"),
               Part("xIELU - SwiGLU", -0.001, (-0.02, 0.018), 0.0, "below", "bits/byte"))),
    # an equivalence band
    _claim("band", estimate=0.1, ci=(-0.3, 0.4), threshold=0.0, supports="above", equivalence_margin=0.5,
           verdict="equivalent", parts=(Part("change", 0.1, (-0.3, 0.4), 0.0, units="log10 MSE", margin=0.5),)),
    # no threshold at all
    _claim("open", estimate=2.0, ci=(1.0, 3.0), verdict="inconclusive", mde=1.0),
]  # fmt: skip


def _drawn(ax, gid: str) -> list:
    return [artist for artist in ax.get_children() if artist.get_gid() == gid]


def _check(claim: Claim, fig) -> None:
    parts = headline.parts_of(claim)
    axes = [ax for ax in fig.axes if _drawn(ax, "ci")]
    assert len(axes) == len(parts)
    paper_at = headline.paper_row(claim)
    for index, (ax, part) in enumerate(zip(axes, parts, strict=True)):
        (ci,) = _drawn(ax, "ci")
        segment = np.asarray(ci.get_segments()[0])
        assert segment[:, 0].tolist() == pytest.approx(list(part.ci))
        (estimate,) = _drawn(ax, "estimate")
        assert estimate.get_xdata()[0] == pytest.approx(part.estimate)
        thresholds = _drawn(ax, "threshold")
        if part.threshold is None:
            assert not thresholds
        else:
            assert thresholds[0].get_xdata()[0] == pytest.approx(part.threshold)
        bands = _drawn(ax, "band")
        if part.margin is None:
            assert not bands
        else:
            left, width = bands[0].get_x(), bands[0].get_width()  # axvspan's rectangle, x in data coordinates
            assert (left, left + width) == pytest.approx((part.threshold - part.margin, part.threshold + part.margin))
        papers = _drawn(ax, "paper")
        if index == paper_at:
            assert papers[0].get_xdata()[0] == pytest.approx(claim.paper_value)
            low, high = ax.get_xlim()
            assert low < claim.paper_value < high  # on its row's scale, never clipped
        else:
            assert not papers
        arrows = _drawn(ax, "supports")
        if part.supports and part.threshold is not None:
            assert arrows[0].get_text() == ("supports →" if part.supports == "above" else "← supports")


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.claim_id for c in CLAIMS])
def test_a_headline_figure_draws_its_claims_interval_threshold_band_and_paper_value(claim):
    _check(claim, headline.headline_figure(claim))
    assert claim.verdict in headline.headline_alt(claim)


def test_the_theory_claims_headline_figures():
    from actlab.theory import checks
    from actlab.theory.claims import Settings, claims

    report = checks.run_checks(configs=3, seed=0, mc_samples=2_000)
    for claim in claims(report, Settings(configs=3, seed=0, mc_samples=2_000)):
        _check(claim, headline.headline_figure(claim))


@pytest.mark.parametrize("phone", [False, True])
def test_the_forest_plot_draws_a_diamond_for_every_claim_with_a_paper_value(phone):
    fig = forest.draw(CLAIMS, phone=phone)  # the phone layout draws the same rows, only arranged for 390 px
    diamonds = [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == "paper"]
    assert len(diamonds) == sum(claim.paper_value is not None for claim in CLAIMS)
    assert sorted(d.get_xdata()[0] for d in diamonds) == sorted(c.paper_value for c in CLAIMS if c.paper_value)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.claim_id for c in CLAIMS])
def test_the_forest_plots_phone_layout_draws_each_claims_rows_as_the_headline_does(claim):
    _check(claim, forest.draw([claim], phone=True))
