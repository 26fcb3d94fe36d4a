"""The Flex-Act study's code: the batched fleet against actlab's FlexAct, the arm grid, data, runs, analysis."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from actlab.routing import FlexAct, FlexActConfig
from actlab.studies.flexact import analysis, prior, scale
from actlab.studies.flexact.arms import FLEXACT, Arm, expand
from actlab.studies.flexact.data import linear_fit_mse, make_inputs, target
from actlab.studies.flexact.fleet import RouterFleet
from actlab.studies.flexact.run import RunSettings, train_arms
from actlab.train import Budget, TrainConfig, train

K = 5


def _solo(arm: Arm, fleet: RouterFleet, m: int, hidden: int) -> tuple[nn.Module, FlexAct | None]:
    """The arm as an ordinary network (Linear -> FlexAct or fixed activation [-> Linear]) with the fleet's start.

    The router's config is written out from the arm here, not taken from the study's `arm_config`, so the test
    also checks that mapping. The solo router runs FlexAct's lean path, the fleet the stacked reference path.
    """
    first = nn.Linear(4, max(hidden, 1)).double()
    first.weight.data.copy_(fleet.w1.data[m])
    first.bias.data.copy_(fleet.b1.data[m])
    router = None
    if arm.model == FLEXACT:
        config = FlexActConfig(
            alpha=arm.alpha,
            pseudo_temperature=None if arm.lam in (None, "tau") else arm.lam,
            g_bar=arm.g_bar or "mean",
            logit_grad_clip=1.0 if arm.strategy == "logit_clip" else None,
            norm_clip=0.25 if arm.strategy == "kl_clipped_norms" else None,
            normalize_outputs={"output_norm": "sample", "output_norm_batch": "batch"}.get(arm.strategy, False),
            tau=0.7,
            compile=False,
        )
        router = FlexAct(config, generator=torch.Generator().manual_seed(7)).double()
        act: nn.Module = router
    else:
        from actlab.activations import get_activation

        act = get_activation(arm.model)
    layers = [first, act]
    if hidden:
        second = nn.Linear(hidden, 1).double()
        second.weight.data.copy_(fleet.w2.data[m][None, :])
        second.bias.data.copy_(fleet.b2.data[m : m + 1])
        layers.append(second)
    return nn.Sequential(*layers), router


@pytest.mark.parametrize("hidden", [0, 3])
def test_fleet_follows_each_flexact_network_exactly(hidden: int) -> None:
    """Each model of a fleet, trained by actlab's loop in its stacked mode, follows the same arm built as
    Linear -> FlexAct and trained alone by the same loop (float64, same noise draws and batches)."""
    arms = [
        Arm("sigmoid", 5.0, FLEXACT, "kl_grad_norm", 0.3, "tau", "mean"),
        Arm("relu", 5.0, FLEXACT, "kl_grad_norm", 1.0, 0.5, "mean"),
        Arm("tanh", 5.0, FLEXACT, "kl_grad_norm", 0.3, 2.0, "l2"),
        Arm("tanh", 2.0, FLEXACT, "no_correction", 0.0, None, None),
        Arm("sigmoid", 5.0, FLEXACT, "logit_clip", 0.0, None, None),
        Arm("sigmoid", 5.0, FLEXACT, "kl_clipped_norms", 0.3, "tau", "mean"),
        Arm("sigmoid", 5.0, FLEXACT, "output_norm", 0.0, None, None),
        Arm("sigmoid", 5.0, FLEXACT, "output_norm_batch", 0.0, None, None),
        Arm("identity", 5.0, "relu", "fixed", 0.0, None, None),
    ]
    torch.manual_seed(0)
    fleet = RouterFleet(arms, hidden=hidden, generator=torch.Generator().manual_seed(7)).double()
    fleet.router.tau = 0.7
    solos = [_solo(arm, fleet, m, hidden) for m, arm in enumerate(arms)]
    x = make_inputs(0, 64, 1).x_train.double()
    y = torch.stack([target(x.float(), arm.ground_truth, arm.k) for arm in arms], dim=1).double()  # (n, M)
    config = TrainConfig(task="regression", optimizer="adam", lr=0.05, batch_size=16, device="cpu")
    budget = Budget.steps(10)
    stacked = train(fleet, (x, y), replace(config, stacked=True), budget, progress=False)
    assert stacked.status == "ok" and stacked.models_diverged_at == [None] * len(arms)
    for m, (model, _) in enumerate(solos):
        assert train(model, (x, y[:, m : m + 1]), config, budget, progress=False).status == "ok"
    # Same arithmetic up to float64 roundoff (Adam's 1/sqrt(v) amplifies it early on); a wrong
    # formula would differ at the 1e-3 level after a few steps.
    for m, (model, router) in enumerate(solos):
        torch.testing.assert_close(fleet.w1.data[m], model[0].weight.data, rtol=0, atol=1e-8)
        torch.testing.assert_close(fleet.b1.data[m], model[0].bias.data, rtol=0, atol=1e-8)
        if router is not None:
            torch.testing.assert_close(fleet.router.log_pi.data[m], router.log_pi.data, rtol=0, atol=1e-8)
        if hidden:
            torch.testing.assert_close(fleet.w2.data[m], model[2].weight.data[0], rtol=0, atol=1e-8)
    assert (fleet.router.log_pi.data[-1] == 0).all()  # the fixed arm's logits never move


def test_expand_applies_the_grid_rules() -> None:
    arms = expand(
        ["relu", "sigmoid"],
        5,
        [FLEXACT, "tanh"],
        ["kl_grad_norm", "output_norm"],
        [0, 0.3],
        ["tau", 1.0],
        ["mean", "l2"],
    )
    per_truth = [arm for arm in arms if arm.ground_truth == "relu"]
    # fixed tanh; no_correction (alpha 0); 2 lambdas x 2 g_bar at alpha 0.3; output_norm once
    assert len(per_truth) == 1 + 1 + 4 + 1
    assert len(arms) == len(set(arms)) == 14
    assert Arm("relu", 5.0, FLEXACT, "no_correction", 0.0, None, None) in arms
    assert all(arm.lam is None for arm in arms if arm.strategy in ("output_norm", "fixed", "no_correction"))
    with pytest.raises(ValueError, match="unknown strategy"):
        expand("relu", 5, FLEXACT, "clip_everything")
    with pytest.raises(ValueError, match="lambda"):
        expand("relu", 5, FLEXACT, lam=-1)
    with pytest.raises(ValueError, match="g_bar"):
        expand("relu", 5, FLEXACT, g_bar="max")


@pytest.mark.parametrize(
    ("truth", "distribution", "expected"),
    [
        ("relu", "uniform", 25 * (1 / 6 - 1 / 16) - (5 / 6) ** 2 * 3),  # Var y - Cov(x, y)^2 / Var x, x ~ U(-1, 1)
        ("relu", "normal", 25 * (0.5 - 1 / (2 * math.pi)) - 2.5**2),  # x ~ N(0, 1)
        ("identity", "uniform", 0.0),
    ],
)
def test_linear_fit_mse_matches_closed_forms(truth: str, distribution: str, expected: float) -> None:
    assert linear_fit_mse(truth, 5.0, distribution) == pytest.approx(expected, abs=0.02)


def test_runs_are_seeded_and_diverged_arms_stay_apart() -> None:
    arms = expand(["sigmoid", "identity"], [5.0, 1e30], [FLEXACT, "relu"], alpha=[0.0, 0.3])
    settings = RunSettings(seed=3, epochs=2, n_train=64, n_test=32, batch_size=32, probe_epochs=1)
    first, second = train_arms(arms, settings), train_arms(arms, settings)
    assert [row["mse"] for row in first.rows] == [row["mse"] for row in second.rows]
    huge = [row for row in first.rows if row["k"] == 1e30 and row["ground_truth"] == "identity"]
    assert huge and all(row["status"] == "diverged" and row["mse"] is None for row in huge)
    normal = [row for row in first.rows if row["k"] == 5.0]
    assert all(row["status"] == "ok" and math.isfinite(row["mse"]) for row in normal)
    routed = next(row for row in normal if row["model"] == FLEXACT and row["alpha"] == 0.3)
    assert {"routing_probs", "trajectory", "p_tilde", "g_bar_values", "probe", "selected", "recovered"} <= set(routed)
    assert sum(routed["routing_probs"]) == pytest.approx(1.0, abs=1e-6)
    assert len(routed["trajectory"]) == len(routed["trajectory_epochs"]) == 3
    assert first.status == "ok"
    import matplotlib

    matplotlib.use("Agg")
    from actlab.studies.flexact import plots

    figure = plots.run_trajectories(first.rows, max_panels=3)
    assert len([ax for ax in figure.axes if ax.lines]) == 3  # one panel per routed arm, curves drawn


# ---------------------------------------------------------------- analysis on planted inputs
def test_proportion_and_mse_cells() -> None:
    cell = analysis.proportion_cell([True] * 5)
    assert cell["rate"] == 1.0 and cell["rate_low"] == pytest.approx(0.025 ** (1 / 5))
    mse = analysis.mse_cell([1.0, 2.0, None, 3.0, 4.0])
    assert mse["n"] == 4 and mse["n_diverged"] == 1 and mse["mean"] == 2.5
    assert mse["ci_low"] <= 2.5 <= mse["ci_high"]


def _planted_rows(rate: dict[str, float], seeds: int = 10) -> pd.DataFrame:
    """Flex-Act rows where ground truth g is recovered in a fraction rate[g] of seeds (first seeds succeed)."""
    rows = []
    for truth, fraction in rate.items():
        for seed in range(seeds):
            ok = seed < round(fraction * seeds)
            rows.append(
                {
                    "ground_truth": truth,
                    "k": 5.0,
                    "model": FLEXACT,
                    "strategy": "kl_grad_norm",
                    "alpha": 0.3,
                    "lam_label": "tau",
                    "g_bar": "mean",
                    "seed": seed,
                    "mse": 0.01 if ok else 1.0,
                    "recovered": ok,
                    "selected": truth if ok else "sigmoid",
                    "candidates": ["relu", "sigmoid"],
                    "p_tilde": [0.1, 0.9],
                    "routing_probs": [0.5, 0.5],
                }
            )
    frame = pd.DataFrame(rows)
    frame["variant"] = [analysis.variant(row) for row in frame.to_dict("records")]
    return frame


def test_prior_region_finds_the_planted_cell_and_the_worst_truth() -> None:
    good = _planted_rows({"relu": 1.0, "sigmoid": 0.9})
    bad = _planted_rows({"relu": 0.2, "sigmoid": 1.0}).assign(lam_label="0.1")
    grid = prior.recovery_grid(pd.concat([good, bad]))
    table = prior.region(grid)
    assert table.set_index("lam_label")["all_recovered"].to_dict() == {"0.1": False, "tau": True}
    worst = table.set_index("lam_label").loc["0.1"]
    assert worst["worst_truth"] == "relu" and worst["worst_rate"] == pytest.approx(0.2)
    assert prior.reproducing_cells(table, 0.3) == [{"lam_label": "tau", "g_bar": "mean", "mean_rate": 0.95}]
    agreement = prior.prior_agreement(bad).iloc[0]  # p_tilde favours sigmoid; relu runs follow it 8 of 10 times
    assert agreement["prior_favourite"] == "sigmoid" and agreement["follows_when_wrong"] == pytest.approx(0.8)


def test_scale_regression_recovers_a_planted_slope() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(8):
        offset = rng.normal(0, 0.02)
        for truth in ("sigmoid", "tanh"):
            for k in (0.5, 1.0, 2.0, 5.0, 10.0):
                mass = 0.3 + 0.1 * math.log(k) + offset + rng.normal(0, 0.01)
                rows.append(
                    {
                        "model": FLEXACT,
                        "strategy": "no_correction",
                        "lam_label": "-",
                        "g_bar": "-",
                        "alpha": 0.0,
                        "ground_truth": truth,
                        "k": k,
                        "seed": seed,
                        "unbounded_mass": mass,
                    }
                )
    fit = scale.mass_regression(pd.DataFrame(rows), alpha=0.0)
    assert fit["ci_low"] < 0.1 < fit["ci_high"] and fit["ci_low"] > 0.05
    assert fit["clusters"] == 8


def test_cor_d3_predictions_follow_the_sympy_expectations() -> None:
    sigmas = np.array([0.5, 1.0, 2.0])
    table = scale.predictions(["relu", "sigmoid", "identity"], sigmas)
    relu = table[table.candidate == "relu"]["predicted"].to_numpy()
    np.testing.assert_allclose(relu, sigmas / math.sqrt(2 * math.pi))
    assert (table[table.candidate == "sigmoid"]["predicted"] == 0.5).all()
    assert table[table.candidate == "identity"]["predicted"].isna().all()
    assert scale.predicted_slope("relu") == 1.0 and scale.predicted_slope("sigmoid") == 0.0


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "leaky_relu", "identity", "elu"])
def test_derivatives_from_outputs_match_autograd(name: str) -> None:
    from actlab.activations import get_activation
    from actlab.routing.mixture import candidate_derivatives

    h = torch.linspace(-4, 4, 81, dtype=torch.float64).reshape(3, 27, 1).requires_grad_(True)
    (expected,) = torch.autograd.grad(get_activation(name)(h).sum(), h)
    a = get_activation(name)(h).detach()[None]
    torch.testing.assert_close(candidate_derivatives(h, (name,), differentiable=False, a=a)[0], expected)
    torch.testing.assert_close(candidate_derivatives(h, (name,), differentiable=True)[0], expected)
    torch.testing.assert_close(candidate_derivatives(h, (name,), differentiable=False)[0], expected)


def test_count_range_states_one_n_when_cells_agree() -> None:
    assert analysis.count_range(pd.Series([5, 5, 5])) == "5"
    assert analysis.count_range([3, 5, 4]) == "3–5"


def test_uniform_start_is_the_share_of_unbounded_candidates() -> None:
    from actlab.routing.flexact import DEFAULT_CANDIDATES

    assert analysis.uniform_unbounded_mass(DEFAULT_CANDIDATES) == pytest.approx(3 / 5)  # relu, leaky_relu, identity
    assert analysis.uniform_unbounded_mass(("sigmoid", "tanh")) == 0.0
