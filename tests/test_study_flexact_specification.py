"""Known answers for the specification curve (actlab.studies.flexact.specification) and the run settings it varies."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest
import torch

from actlab._legacy_claims import record_claim
from actlab.studies.flexact import analysis, claims, plots, specification
from actlab.studies.flexact.arms import FLEXACT, Arm, expand, expand_sets
from actlab.studies.flexact.fleet import RouterFleet
from actlab.studies.flexact.run import RunSettings, describe, settings_from

matplotlib.use("Agg")

S, N, I = "supported", "not supported", "inconclusive"


def test_all_specifications_agree_gives_that_verdict_stable_everywhere():
    outcome = specification.combine(S, [({"lr": 0.01}, S), ({"epochs": 200}, S), ({"batch_size": 50}, S)])
    assert outcome == specification.Outcome(S, 4, 4, None)
    assert outcome.as_record() == {"stable": 4, "total": 4, "depends_on": None}


def test_one_dimension_that_flips_is_named():
    outcome = specification.combine(S, [({"lr": 0.01}, N), ({"epochs": 200}, S), ({"tau_end": 0.5}, S)])
    assert outcome == specification.Outcome("depends on lr", 3, 4, "lr")


def test_every_dimension_that_flips_alone_is_named_in_dimension_order():
    outcome = specification.combine(N, [({"batch_size": 50}, I), ({"lr": 0.01}, S), ({"epochs": 200}, N)])
    assert (outcome.verdict, outcome.stable, outcome.total) == ("depends on lr, batch_size", 2, 4)


def test_a_flip_only_in_combination_names_the_nearest_combination():
    alternatives = [
        ({"lr": 0.01}, S),
        ({"epochs": 200}, S),
        ({"lr": 0.01, "epochs": 200}, I),
        ({"lr": 0.01, "epochs": 200, "tau_end": 0.5}, I),
    ]
    outcome = specification.combine(S, alternatives)
    assert (outcome.verdict, outcome.stable, outcome.total) == ("depends on lr + epochs", 3, 5)


def test_combine_refuses_the_baseline_as_an_alternative():
    with pytest.raises(ValueError, match="equals the baseline"):
        specification.combine(S, [({}, S)])


def _alternative(changes, estimate, ci):
    return {"changes": changes, "estimate": estimate, "ci": list(ci), "inputs": {"threshold": 0.8}}


def test_rule_across_specifications_applies_the_claims_own_rule():
    rule = specification.rule_across_specifications
    agree = [_alternative({"lr": 0.01}, 0.95, (0.85, 1.0))]
    assert rule(0.9, (0.82, 0.99), "rule_recovery", {"threshold": 0.8}, agree) == S
    flips = [*agree, _alternative({"x1_distribution": "normal"}, 0.3, (0.1, 0.5))]
    assert rule(0.9, (0.82, 0.99), "rule_recovery", {"threshold": 0.8}, flips) == "depends on x1_distribution"


def test_rule_across_specifications_refuses_nan_naming_the_specification():
    broken = [_alternative({"lr": 0.01}, math.nan, (0.1, 0.5))]
    with pytest.raises(ValueError, match="estimate is nan at specification lr=0.01"):
        specification.rule_across_specifications(0.9, (0.82, 0.99), "rule_recovery", {"threshold": 0.8}, broken)


# ---------------------------------------------------------------- from runs to a recorded claim
def _sweep(name: str, settings: dict, rates: dict[float, float], seeds: int = 10) -> analysis.SweepRows:
    """Table 1 rows (Flex-Act alpha 0.3 and 0) where the truth is recovered in a share `rates[lr]` of seeds per run;
    one run per (lr, seed)."""
    rows, run_settings = [], {}
    for lr, rate in rates.items():
        for seed in range(seeds):
            run_id = f"{name}-{lr}-{seed}"
            run_settings[run_id] = {**settings, "lr": lr}
            for truth in ("relu", "sigmoid"):
                for alpha in (0.0, 0.3):
                    ok = seed < round(rate * seeds)
                    rows.append({
                        "run_id": run_id, "ground_truth": truth, "k": 5.0, "model": FLEXACT, "seed": seed,
                        "strategy": "kl_grad_norm" if alpha else "no_correction", "alpha": alpha,
                        "lam_label": "tau" if alpha else "-", "g_bar": "mean" if alpha else "-",
                        "recovered": ok, "selected": truth if ok else "identity", "mse": 0.01,
                    })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["variant"] = [analysis.variant(row) for row in frame.to_dict("records")]
    first = next(iter(run_settings.values()))
    return analysis.SweepRows(name, frame, {"ok": len(run_settings)}, first, run_settings)


BASE = {name: describe(RunSettings())[name] for name in specification.DIMENSIONS}


def test_curve_takes_the_baseline_from_the_main_sweep_and_records_stable_x_of_y(tmp_path):
    recovery = [c for c in claims.claim_specs() if c.claim_id == "flexact-2-table1-recovery"]
    main = {"table1": _sweep("table1", BASE, {0.05: 1.0})}
    # the curve sweep also ran the baseline (ignored: the main sweep decides it) and two alternatives
    curve_sweep = _sweep("curve", BASE, {0.05: 0.0, 0.01: 1.0, 0.1: 0.2})
    curve = specification.build_curve(main, curve_sweep, recovery)
    assert [specification.changes(s, curve.baseline) for s in curve.alternatives()] == [{"lr": 0.01}, {"lr": 0.1}]
    table = curve.table()
    assert table.set_index("specification")["verdict"].to_dict() == {"baseline": S, "lr=0.01": S, "lr=0.1": N}
    claim = record_claim(
        "flexact-2-table1-recovery", "Flex-Act selects the truth.", source="test", budget="test",
        claims_dir=tmp_path, **curve.claim_fields(recovery[0]),
    )  # fmt: skip
    assert claim["verdict"] == "depends on lr"
    assert claim["specifications"] == {"stable": 2, "total": 3, "depends_on": "lr", "heterogeneity_p": None}
    assert claim["estimate"] == 1.0  # the baseline's value, from the main sweep
    assert claim["rule"].startswith("def rule_across_specifications")


def test_curve_refuses_main_sweeps_that_disagree_on_the_baseline():
    main = {
        "table1": _sweep("table1", BASE, {0.05: 1.0}),
        "alpha": _sweep("alpha", {**BASE, "epochs": 50}, {0.05: 1.0}),
    }
    with pytest.raises(ValueError, match="disagree on the baseline"):
        specification.build_curve(main, _sweep("curve", BASE, {0.01: 1.0}), [])


def test_specification_curve_figure_and_its_html_alt_text():
    table = pd.DataFrame(
        [
            {"claim": c, "specification": s, "baseline": s == "baseline", "estimate": e, "ci_low": e - 0.1,
             "ci_high": e + 0.1, "verdict": v, "lr": lr, "epochs": 100}
            for c in ("claim-a", "claim-b")
            for s, e, v, lr in (("baseline", 0.5, S, 0.05), ("lr=0.01", 0.2, N, 0.01))
        ]
    )  # fmt: skip
    figure = plots.specification_curve(table, ["lr", "epochs"], columns=2)
    assert figure._suptitle.get_text() == "Specification curve"
    curves = [ax for ax in figure.axes if ax.get_title().startswith("claim-")]
    assert len(curves) == 2 and all(len(ax.containers) == 2 for ax in curves)  # one CI bar per specification
    html = plots.figure_html(figure, "Specification curve", 'estimates "sorted" <by claim>')
    assert 'alt="estimates &quot;sorted&quot; &lt;by claim&gt;"' in html and "data:image/png;base64," in html


# ---------------------------------------------------------------- what the curve varies in a run
def test_settings_from_applies_the_specification_last_and_rejects_unknown_choices():
    settings = settings_from({"lr": 0.01}, lr=0.05, epochs=3)
    assert (settings.lr, settings.epochs) == (0.01, 3)
    with pytest.raises(TypeError):
        settings_from({"learning_rate": 0.01})


def test_random_router_init_is_shared_by_the_arms_and_leaves_the_weights_alone():
    arms = expand(["relu", "sigmoid"], 5.0, FLEXACT, alpha=[0.0, 0.3])
    torch.manual_seed(4)
    uniform = RouterFleet(arms)
    torch.manual_seed(4)
    drawn = RouterFleet(arms, router_init_std=1.0)
    torch.testing.assert_close(drawn.w1, uniform.w1)  # the draw comes after the weights
    assert (uniform.router.log_pi == 0).all()
    logits = drawn.router.log_pi
    assert logits.std() > 0.1 and (logits == logits[0]).all()  # one draw, copied to every arm
    with pytest.raises(ValueError, match="router_init_std"):
        RouterFleet(arms, router_init_std=-1.0)


def test_expand_sets_is_the_union_of_grids_without_duplicates():
    base = {"ground_truth": "sigmoid", "k": 5.0, "model": FLEXACT}
    arms = expand_sets(base, [{"alpha": [0.0, 0.3]}, {"alpha": 0.3}, {"model": "relu", "k": [1.0, 5.0]}])
    assert arms == [
        Arm("sigmoid", 5.0, FLEXACT, "no_correction", 0.0, None, None),
        Arm("sigmoid", 5.0, FLEXACT, "kl_grad_norm", 0.3, "tau", "mean"),
        Arm("sigmoid", 1.0, "relu", "fixed", 0.0, None, None),
        Arm("sigmoid", 5.0, "relu", "fixed", 0.0, None, None),
    ]
    assert expand_sets(base, []) == expand(**base)
    with pytest.raises(ValueError, match="unknown arm axes"):
        expand_sets(base, [{"learning_rate": 0.1}])
