"""Flex-Act's propositions: autograd against closed forms over random configurations (hypothesis)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from actlab import cli
from actlab.theory import checks as theory_checks
from actlab.theory import propositions as theory
from actlab.theory import scale as theory_scale
from actlab.train.device import cpu_threads

SEEDS = st.integers(min_value=0, max_value=2**31 - 1)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _one_thread():
    with cpu_threads(1):
        yield


@FAST
@given(seed=SEEDS)
def test_prop1_matches_autograd(seed):
    check = theory.prop1(theory.random_case(seed))
    assert check.max_rel_error <= theory.EXACT_TOLERANCE


@FAST
@given(seed=SEEDS)
def test_prop2_matches_autograd(seed):
    check = theory.prop2(theory.random_case(seed))
    assert check.max_rel_error <= theory.EXACT_TOLERANCE


@FAST
@given(seed=SEEDS)
def test_eq24_matches_autograd(seed):
    check = theory.eq24(theory.random_case(seed))
    assert check.max_rel_error <= theory.EXACT_TOLERANCE


@FAST
@given(seed=SEEDS, log_c=st.floats(min_value=-6, max_value=6))
def test_d4_scaling_delta_keeps_the_ordering(seed, log_c):
    check = theory.d4_ordering(theory.random_case(seed), c=float(10**log_c))
    assert check.same_order
    assert check.max_rel_error <= theory.EXACT_TOLERANCE


def test_a_wrong_closed_form_is_caught(monkeypatch, tmp_path, capsys):
    """The check can fail: drop the 1/tau of eq. 8 and the exact rows must fail, the CLI must exit 1.

    The straight-through row fails too: its account of the ST gradient is Prop. 1 plus a stated term."""
    original = theory._prop1_closed_form

    def without_tau(p, a, x, delta, tau):
        closed, scale = original(p, a, x, delta, tau)
        return closed * tau, scale

    monkeypatch.setattr(theory, "_prop1_closed_form", without_tau)
    out = tmp_path / "check.json"
    assert cli.main(["check", "--configs", "5", "--mc-samples", "2000", "--json", str(out)]) == 1
    rows = {row["claim"]: row["verdict"] for row in json.loads(out.read_text())["rows"]}
    failed = {claim for claim, verdict in rows.items() if verdict == "fails"}
    assert failed == {
        "Prop. 1 (eq. 8)",
        "eq. 24 (Prop. 1 + alpha Prop. 2)",
        "App. B: E|ReLU'(h)| ≈ 1.0",
        "Prop. 1 under hard straight-through",
    }
    assert "FAILED: Prop. 1 (eq. 8), eq. 24" in capsys.readouterr().out


def test_straight_through_differs_from_prop1_by_the_stated_term():
    gaps = [theory.straight_through_gap(theory.random_case(seed)) for seed in range(30)]
    for gap in gaps:
        assert gap.gap_identity_rel_error <= theory.EXACT_TOLERANCE
    assert np.median([gap.rel_deviation for gap in gaps]) > 0.1  # Prop. 1 is really off under ST
    batch_noise = [gap for gap in gaps if not gap.case.per_sample]
    assert batch_noise and all(gap.selected_st != 0 for gap in batch_noise)  # Prop. 1 predicts 0 there


def test_undetached_target_changes_weights_not_logits():
    gaps = [theory.undetached_target_gap(theory.random_case(seed)) for seed in range(30)]
    assert max(gap.logit_rel_change for gap in gaps) <= theory.EXACT_TOLERANCE
    smooth = [gap for gap in gaps if {"sigmoid", "tanh"} & set(gap.case.candidates)]
    # sigma'' != 0 for these, so the weights get extra gradient unless p_tilde saturates (tiny lambda)
    assert smooth and np.mean([gap.weight_extra_norm > 0 for gap in smooth]) >= 0.8
    linear_only = theory.random_case(0)
    from dataclasses import replace

    flat = theory.undetached_target_gap(replace(linear_only, candidates=("relu", "identity")))
    assert flat.weight_extra_norm == 0.0  # piecewise-linear derivatives carry no gradient in h


def test_scale_bias_closed_forms():
    sigma = theory_scale.sigma_sym
    assert sp.simplify(theory_scale.expectation("relu") - sigma / sp.sqrt(2 * sp.pi)) == 0
    assert theory_scale.expectation("sigmoid") == sp.Rational(1, 2)
    assert theory_scale.expectation("tanh") == 0
    assert theory_scale.is_linear_in_sigma(theory_scale.expectation("relu"))
    assert not theory_scale.is_linear_in_sigma(theory_scale.expectation("elu"))
    assert theory_scale.relu_derivative_mean() == sp.Rational(1, 2)
    # SymPy's ELU integral against independent numerical quadrature at sigma_h = 2
    elu = sp.lambdify(sigma, theory_scale.expectation("elu"))
    quad, _ = integrate.quad(lambda h: (h if h > 0 else math.expm1(h)) * stats.norm.pdf(h, scale=2.0), -40, 40)
    assert abs(elu(2.0) - quad) < 1e-9


def test_scale_bias_monte_carlo_agrees_and_the_corollary_holds():
    result = theory_scale.scale_bias(samples=20_000, seed=3)
    assert result.holds
    assert result.max_abs_z < 5
    assert result.slopes["relu"] == pytest.approx(1 / math.sqrt(2 * math.pi), rel=0.05)
    assert abs(result.slopes["sigmoid"]) < 0.01 and abs(result.slopes["tanh"]) < 0.01


def test_check_command_reports_every_row_and_exits_zero(capsys, tmp_path):
    out = tmp_path / "check.json"
    code = cli.main(["check", "--configs", "4", "--mc-samples", "2000", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    for claim in (
        "Prop. 1 (eq. 8)",
        "Prop. 2 (eq. 22)",
        "eq. 24",
        "D.4",
        "Cor. D.3",
        "straight-through",
        "not detached",
    ):
        assert claim in printed
    assert out.exists()


def test_random_cases_are_reproducible_and_varied():
    assert theory.random_case(11) == theory.random_case(11)
    cases = [theory.random_case(seed) for seed in range(50)]
    assert {case.loss for case in cases} == set(theory.LOSSES)
    assert {case.per_sample for case in cases} == {True, False}


@pytest.mark.slow
def test_propositions_notebook_executes(repo_root, tmp_path):
    from actlab.commands.site_build import build_site
    from actlab.site import report

    config = report.SiteConfig(
        notebooks_dir=repo_root / "notebooks",
        runs_dir=tmp_path / "runs",
        out_dir=tmp_path / "site",
        only=("02_propositions",),
        parameters={"02_propositions": {"configs": 3, "mc_samples": 2000}},
    )
    pages = build_site(config)
    assert [page.status for page in pages] == ["ok"], pages[0].error
    html = (tmp_path / "site" / "02_propositions.html").read_text()
    assert html.count("data:image/png;base64") >= 4
    published = sorted(path.stem for path in (tmp_path / "runs" / "claims").glob("*.json"))
    names = ("1-prop1", "2-prop2", "3-eq24", "4-d4", "5-cor-d3", "6-appendix-b-relu-gradient")
    assert published == [f"propositions-{name}" for name in names]
    assert "Flex-Act" in (tmp_path / "site" / "index.html").read_text()


@pytest.mark.parametrize(
    ("identity_error", "median_deviation", "verdict"),
    [
        (1e-14, 0.4, theory_checks.CONDITIONAL),  # the stated term explains a real gap: only the soft case is exact
        (1e-14, 1e-13, theory_checks.HOLDS),  # no gap at all: Prop. 1 would hold under ST too
        (1e-3, 0.4, theory_checks.FAILS),  # the stated term does not account for the gap
    ],
)
def test_straight_through_row_is_computed_from_the_measurements(identity_error, median_deviation, verdict):
    assert theory_checks.straight_through_verdict(identity_error, median_deviation) == verdict


@pytest.mark.parametrize(
    ("logit_change", "extra", "verdict"),
    [
        (1e-13, 0.02, theory_checks.CONDITIONAL),  # logits as Prop. 2 says, weights get an extra gradient
        (1e-13, 0.0, theory_checks.HOLDS),  # no extra gradient anywhere: detaching would not matter
        (1e-13, math.inf, theory_checks.CONDITIONAL),  # extra gradient with no task gradient to compare to
        (1e-4, 0.02, theory_checks.FAILS),  # the logit gradient itself changed
    ],
)
def test_undetached_row_is_computed_from_the_measurements(logit_change, extra, verdict):
    assert theory_checks.undetached_verdict(logit_change, extra) == verdict


def test_condition_rows_refuse_failed_measurements():
    with pytest.raises(ValueError, match="measurement failed"):
        theory_checks.straight_through_verdict(math.nan, 0.4)
    with pytest.raises(ValueError, match="measurement failed"):
        theory_checks.undetached_verdict(1e-13, math.nan)


def test_condition_rows_of_the_check_table_follow_their_rules():
    report = theory_checks.run_checks(configs=6, mc_samples=2000)
    rows = {row.claim: row for row in report.rows}
    st_row, und_row = rows["Prop. 1 under hard straight-through"], rows["Prop. 2 with p_tilde not detached"]
    expected_st = theory_checks.straight_through_verdict(
        st_row.details["identity_rel_error"], st_row.details["median_rel_deviation"]
    )
    expected_und = theory_checks.undetached_verdict(und_row.max_rel_error, und_row.details["max_extra_relative"])
    assert (st_row.verdict, und_row.verdict) == (expected_st, expected_und) == (theory_checks.CONDITIONAL,) * 2


def test_a_few_configurations_check_without_a_warning():
    """With three configurations no straight-through value may be finite; the checks then say so instead of taking
    the mean of nothing, whose RuntimeWarning would keep the propositions page from being published."""
    import warnings

    from actlab.theory.checks import run_checks

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_checks(configs=3, seed=0, mc_samples=2_000)
