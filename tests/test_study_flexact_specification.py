"""Known answers for the specification curve (actlab.studies.flexact.specification) and the run settings it varies."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from actlab.stats.robustness import assess
from actlab.studies.flexact import analysis, designs, plots, rules, specification
from actlab.studies.flexact.arms import FLEXACT, Arm, expand, expand_sets
from actlab.studies.flexact.fleet import RouterFleet
from actlab.studies.flexact.run import RunSettings, describe, settings_from

matplotlib.use("Agg")

SWEEPS = Path(__file__).resolve().parent.parent / "notebooks" / "flexact" / "sweeps"

S, N = "supported", "not supported"


# ---------------------------------------------------------------- the alternatives, as the robustness rule reads them
def _plan(values: list[float]) -> specification.Plan:
    return specification.make_plan(
        tuple(BASE[d] for d in specification.DIMENSIONS),
        [tuple({**BASE, "lr": lr}[d] for d in specification.DIMENSIONS) for lr in values],
    )


def test_each_alternative_is_decided_at_the_claims_level_and_at_the_family_level():
    """A one-sample claim (mean of column 0 against 0): an alternative decisive at 0.05 but not at 0.05 / 2 keeps
    its own verdict and cannot contradict; one decisive at 0.05 / 2 is the family verdict."""
    design, plan = _OneSample(), _plan([0.01, 0.1])
    z = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    weak = (1.0 + z / z.std(ddof=1) * np.sqrt(5) / 3.1)[:, None]  # t = 3.1, 4 df: decisive at 0.05, not at 0.025
    strong = np.full((5, 1), 1.0) + np.linspace(-0.01, 0.01, 5)[:, None]
    tables = {plan.baseline: -strong, plan.alternatives[0]: weak, plan.alternatives[1]: strong}
    primary = design.verdict(tables[plan.baseline], 0.05)
    assert primary == N
    results = specification.specification_results(design, tables, plan, alpha=0.05, primary=primary,
                                                  towards_support=True)  # fmt: skip
    by_label = {r.label: r for r in results}
    assert set(by_label) == {"learning rate 0.01", "learning rate 0.1"}  # the choices in words
    assert by_label["learning rate 0.1"].family_verdict == S and by_label["learning rate 0.1"].p_against < 1e-6
    robustness = assess(primary, design.detection(tables[plan.baseline], 0.05).mde, results)
    assert [c.label for c in robustness.contradicting] == ["learning rate 0.1"]
    assert specification.contradicted_fast(design, tables, plan, alpha=0.05, primary=primary)


def test_an_alternative_that_is_only_inconclusive_never_counts_against_the_primary_verdict():
    design, plan = _OneSample(), _plan([0.01, 0.1])
    rng = np.random.default_rng(3)
    tables = {plan.baseline: rng.normal(1.0, 0.3, (10, 1)), **{spec: rng.normal(-0.2, 3.0, (2, 1))
                                                             for spec in plan.alternatives}}  # fmt: skip
    primary = design.verdict(tables[plan.baseline], 0.05)
    results = specification.specification_results(design, tables, plan, alpha=0.05, primary=primary,
                                                  towards_support=True)  # fmt: skip
    robustness = assess(primary, design.detection(tables[plan.baseline], 0.05).mde, results)
    assert primary == S and robustness.status == "too small to tell" and not robustness.contradicting
    assert not specification.contradicted_fast(design, tables, plan, alpha=0.05, primary=primary)


class _OneSample(designs.ScaleBias):
    """A one-part claim: the mean of column 0 against 0 (the rule of Table 1's recovery on a t interval)."""

    def __init__(self) -> None:
        object.__setattr__(self, "truth_name", "one-sample")

    rule = staticmethod(rules.rule_recovery)
    threshold = 0.0

    def decisions(self, stack, alpha):
        moments = designs.StackMoments.of(stack)
        low, high = moments.interval(0, 1 - alpha)
        return [(float(moments.mean[i, 0]), (float(low[i]), float(high[i])), {"threshold": 0.0})
                for i in range(len(stack))]  # fmt: skip

    def holds(self, stack):
        return designs.StackMoments.of(stack).mean[:, 0] > 0.0

    def detection(self, table, alpha):
        x = table[:, 0]
        d = designs.standardised_mde(int(np.isfinite(x).sum()), alpha, designs.POWER)
        return designs.Detection(d * designs.sd_of(x), d * designs.sd_of(x), designs.t_p(x, 0.0, "above"),
                                 designs.t_p(x, 0.0, "below"))  # fmt: skip


# ---------------------------------------------------------------- the design of the default curve
def test_default_design_is_a_resolution_iv_fraction_with_both_directions_of_every_choice():
    from actlab.stats.factorial import fractional_factorial

    design = fractional_factorial(specification.DIMENSIONS, specification.GENERATORS)
    assert design.resolution == 4 and len(design.runs) == 16
    specs = specification.default_design()
    baseline = describe(RunSettings())
    for name in ("lr", "epochs", "tau_end", "batch_size"):  # numeric choices: one value below, one above
        values = {spec[name] for spec in specs}
        assert min(values) < baseline[name] < max(values), name
    assert {spec["epochs"] for spec in specs} == {50, 150}  # epochs above AND below the default 100
    assert {spec["tau_end"] for spec in specs} == {0.01, 0.5}  # tau end below AND above the default 0.1
    assert {spec["x1_distribution"] for spec in specs} == {"uniform", "normal"}
    assert {spec["router_init_std"] for spec in specs} == {0.0, 1.0}


def test_the_default_sweep_runs_the_designed_specifications():
    default = yaml.safe_load((SWEEPS / "default" / "speccurve.yml").read_text(encoding="utf-8"))
    assert default["grid"]["specification"] == specification.default_design()
    full = yaml.safe_load((SWEEPS / "full" / "speccurve.yml").read_text(encoding="utf-8"))
    baseline = describe(RunSettings())
    for name in ("lr", "epochs", "tau_end", "batch_size"):
        assert min(full["grid"][name]) < baseline[name] < max(full["grid"][name]), name


def test_effects_of_a_planted_interaction_are_found_on_the_design():
    """Per-run values = 1.0 x epochs + 0.5 x epochs x tau_end (coded) + noise (SD 0.05) on the default design, two
    seeds: the effects name epochs and its pair (through its alias chain), not the others."""
    rng = np.random.default_rng(0)
    plan = specification.make_plan(
        tuple(BASE[d] for d in specification.DIMENSIONS),
        [specification.specification_of(spec) for spec in specification.default_design()],
    )
    e, t = specification.DIMENSIONS.index("epochs"), specification.DIMENSIONS.index("tau_end")
    tables = {spec: (plan.code(spec)[e] + 0.5 * plan.code(spec)[e] * plan.code(spec)[t]
                     + rng.normal(0, 0.05, size=(2, 1))) for spec in plan.specifications}  # fmt: skip
    found = {effect.label: effect for effect in specification.claim_effects(_OneSample(), tables, plan)}
    assert found["epochs"].estimate == pytest.approx(2.0, abs=0.15)  # high minus low of 1.0 x coded
    pair = next(label for label in found if "epochs x tau_end" in label)
    assert found[pair].estimate == pytest.approx(1.0, abs=0.15)
    assert found[pair].p < 1e-10 and found["epochs"].p < 1e-10
    assert all(abs(effect.estimate) < 0.2 for label, effect in found.items() if label not in ("epochs", pair))


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


def test_curve_takes_the_baseline_from_the_main_sweep_and_reads_the_alternatives_beside_it():
    recovery = designs.Recovery()
    main = {"table1": _sweep("table1", BASE, {0.05: 1.0})}
    # the curve sweep also ran the baseline (ignored: the main sweep decides it) and two alternatives
    curve_sweep = _sweep("curve", BASE, {0.05: 0.0, 0.01: 1.0, 0.1: 0.2})
    curve = specification.build_curve(main, curve_sweep, [recovery])
    assert [curve.plan.changes(s) for s in curve.plan.alternatives] == [{"lr": 0.01}, {"lr": 0.1}]
    table = curve.table()
    expected = {"baseline": S, "learning rate 0.01": S, "learning rate 0.1": N}
    assert table.set_index("specification")["verdict"].to_dict() == expected
    tables = curve.tables[recovery.claim_id]
    primary = recovery.verdict(tables[curve.plan.baseline], 0.05)
    assert primary == S  # the baseline's verdict, from the main sweep (20 of 20)
    results = specification.specification_results(recovery, tables, curve.plan, alpha=0.05, primary=primary,
                                                  towards_support=True)  # fmt: skip
    robustness = assess(primary, recovery.detection(tables[curve.plan.baseline], 0.05).mde, results)
    # 4 of 20 at lr 0.1 is decisive at alpha / 2 as well: an adequate specification contradicts the primary verdict
    assert robustness.status == "contradicted" and [c.label for c in robustness.contradicting] == ["learning rate 0.1"]
    assert robustness.line().startswith("agrees at 1 of 2 adequately powered specifications")


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
    titles = {plots.claim_words(claim) for claim in ("claim-a", "claim-b")}  # panels titled in words, not ids
    curves = [ax for ax in figure.axes if ax.get_title() in titles]
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


def test_the_full_grid_codes_three_levels_and_estimates_every_pair():
    """The full profile's curve (every combination, 3 x 3 x 3 x 2 x 3 x 2): three levels coded -1, 0, +1, no alias
    chains (all 15 two-way interactions apart), the baseline among the grid's points but not an alternative."""
    grid = yaml.safe_load((SWEEPS / "full" / "speccurve.yml").read_text(encoding="utf-8"))["grid"]
    import itertools

    specs = list(itertools.product(*(grid[name] for name in specification.DIMENSIONS)))
    plan = specification.make_plan(tuple(BASE[d] for d in specification.DIMENSIONS), specs)
    assert len(plan.alternatives) == len(specs) - 1 == 323
    assert {code for spec in plan.alternatives for code in plan.code(spec)} == {-1.0, 0.0, 1.0}
    tables = {spec: np.zeros((1, 1)) + plan.code(spec)[0] for spec in plan.specifications}
    found = specification.claim_effects(_OneSample(), tables, plan)
    assert len(found) == 6 + 15 and all(len(effect.terms) == 1 for effect in found)
