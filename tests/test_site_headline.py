"""Every claim's headline figure draws the quantity its rule decides: read back from the figure itself, the drawn
interval, threshold, band and paper value are the claim's (issue Z, item 3)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.text import Text

from actlab.claim import Claim, Part
from actlab.figure_style import FAMILY_FAILED, VERDICT_COLORS
from actlab.site import claim_text, forest, headline

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


# Flex-Act App. B as the issue found it: the claim fails on the MSE, while its selection part holds (1.0 [0.93, 1]).
APP_B = _claim("appb", study="flexact", estimate=1.0, ci=(0.93, 1.0), threshold=0.9, supports="above",
               verdict="not supported", units="selection accuracy", parts=(
                   Part("Sigmoid selected", 1.0, (0.93, 1.0), 0.9, "above", "selection accuracy"),
                   Part("plateau", 0.01, (-0.1, 0.1), 0.0, units="log10 MSE", margin=0.3),
                   Part("gain over alpha = 0", -0.7, (-0.78, -0.62), 0.0, "above", "log10 MSE"),
                   Part("slope", 0.1, (-0.2, 0.4), 0.0, "above", "log10 MSE"),
                   Part("untestable slope", 0.5, (0.4, 0.6), 0.0, "above", "u", untestable="cannot move")))  # fmt: skip


@pytest.mark.parametrize(
    ("part", "verdict"),
    [(APP_B.parts[0], "supported"), (APP_B.parts[1], "equivalent"), (APP_B.parts[2], "not supported"),
     (APP_B.parts[3], "inconclusive"), (APP_B.parts[4], "inconclusive"),
     (Part("below", -1.0, (-2.0, -0.5), 0.0, "below"), "supported"),
     (Part("below, against", 1.0, (0.5, 2.0), 0.0, "below"), "not supported"),
     (Part("no threshold", 1.0, (0.5, 2.0)), "not judged"),
     (Part("band, outside", 1.0, (0.5, 2.0), 0.0, margin=0.3), "inconclusive")],
)  # fmt: skip
def test_a_parts_own_verdict_comes_from_its_interval_threshold_side_and_margin(part, verdict):
    assert claim_text.part_verdict(part) == verdict


def _ci_colors(fig) -> list[str]:
    return [to_hex(_drawn(ax, "ci")[0].get_colors()[0]) for ax in fig.axes if _drawn(ax, "ci")]


@pytest.mark.parametrize(
    "draw", [headline.headline_figure, lambda c: forest.draw([c]), lambda c: forest.draw([c], phone=True)]
)
def test_each_part_is_coloured_by_its_own_verdict_not_its_claims(draw):
    """The issue's probe: App. B's Sigmoid selection 1.0 [0.93, 1] was drawn red because the claim failed on the MSE;
    it is drawn as holding, the MSE gain as failing, the plateau inside its band, the rest undecided."""
    colors = {verdict: color.lower() for verdict, color in VERDICT_COLORS.items()}
    expected = ["supported", "equivalent", "not supported", "inconclusive", "inconclusive"]
    assert _ci_colors(draw(APP_B)) == [colors[verdict] for verdict in expected]
    texts = " ".join(t.get_text() for t in draw(APP_B).findobj(Text))
    assert "this part holds" in texts and "this part fails" in texts and "not supported" in texts
    # a claim the family-wise control takes back greys its decisive parts too; undecided ones keep their colour
    greyed = APP_B.with_changes(survives_family=False, p_value=0.01)
    assert _ci_colors(draw(greyed))[:3] == [colors[FAMILY_FAILED], colors["equivalent"], colors[FAMILY_FAILED]]


def test_one_part_claims_keep_their_claims_verdict():
    rate = CLAIMS[0]  # no parts of its own: its one row is the claim
    assert _ci_colors(headline.headline_figure(rate)) == [VERDICT_COLORS["not supported"].lower()]


def test_the_forest_plot_shares_one_scale_per_paper_and_unit():
    """Within a paper, rows in the same unit share their x-range (the union of theirs); another paper's rows in the
    same unit, and rows in another unit, keep their own."""
    other = _claim("other", study="flexact", estimate=0.2, ci=(0.1, 0.3), threshold=0.5, supports="above",
                   verdict="not supported", units="selection accuracy")  # fmt: skip
    elsewhere = other.with_changes(claim_id="elsewhere", study="xielu", estimate=5.0, ci=(4.0, 6.0))
    for phone in (False, True):
        fig = forest.draw([APP_B, other, elsewhere], phone=phone)
        limits = [ax.get_xlim() for ax in fig.axes if _drawn(ax, "ci")]
        assert limits[0] == limits[5]  # App. B's selection and the other Flex-Act claim: one scale
        assert limits[0][0] <= 0.1 and limits[0][1] >= 1.0  # covering both intervals
        assert limits[1] == limits[2] == limits[3]  # App. B's three log10 MSE rows
        assert limits[6] != limits[0] and limits[6][1] >= 6.0  # xIELU's row in the same unit: its own scale


def test_the_headline_figure_is_drawn_for_a_phones_column():
    """Shown at its own width (96 px an inch) and shrunk to a 390-px phone's column, its smallest text is 9 px."""
    for claim in (CLAIMS[0], CLAIMS[2], APP_B):  # one row, two rows with long names, five rows with a band
        fig = headline.headline_figure(claim)
        assert fig.get_figwidth() == headline.WIDTH_INCHES
        shown = 96 / 72 * min(1.0, headline.PHONE_COLUMN_PX / (headline.WIDTH_INCHES * 96))
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        assert min(t.get_fontsize() for t in texts) * shown >= 9.0
        renderer = FigureCanvasAgg(fig).get_renderer()
        width = fig.get_figwidth() * fig.dpi
        for text in texts:  # nothing is cut at the figure's edge
            box = text.get_window_extent(renderer)
            assert box.x0 >= -1 and box.x1 <= width + 1, text.get_text()
    assert headline.headline_html(APP_B).startswith('<img class="actlab-headline-plot" src="data:image/svg+xml')
