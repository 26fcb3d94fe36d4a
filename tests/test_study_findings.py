"""Each study's finding sentence and fidelity tag on known claims (issue AG's examples of the form).

Known answers: a Table-1-like claim where every truth chose Sigmoid names Sigmoid "whatever the truth"; App. B's
selection holds while its MSE is worse than at alpha = 0; xIELU ties ReLU² and beats SwiGLU by 0.17 bits/byte; only
the ELU+SELU rise clears SmartMixed's margin. Every sentence has at most 35 words; every tag is from the closed set
and says what was reduced or changed.
"""

from __future__ import annotations

import pandas as pd

from actlab.claim import Claim, Fidelity, Part
from actlab.finding import MAX_WORDS, word_count
from actlab.studies.flexact import findings as flexact
from actlab.studies.smartmixed import findings as smartmixed
from actlab.studies.xielu import findings as xielu
from actlab.theory import findings as theory

BASE = dict(statement="s", source="p", units="", rule="r", rule_name="r", kind="experiment")
FLEXACT_BUDGET = "100 epochs of 2000 examples (batch 200) per arm; profile default"


def _claim(claim_id: str, study: str, verdict: str, parts: tuple[Part, ...] = (), **fields) -> Claim:
    values = {"title": claim_id, "n": 50, "budget": "b", "estimate": 0.5, "ci": (0.1, 0.9), **BASE, **fields}
    return Claim(claim_id=claim_id, study=study, verdict=verdict, parts=parts, **values)


def _short(text: str) -> str:
    assert text and word_count(text) <= MAX_WORDS, text
    return text


def _table1(chosen: dict[str, dict[str, int]]) -> Claim:
    counts = {"relu": 0, "sigmoid": 10, "tanh": 0, "leaky_relu": 0, "identity": 6}
    parts = (Part("rate over the truths (strata)", 0.32, (0.2, 0.47), 0.8, "above"),) + tuple(
        Part(f"{truth}: {k} of 10 selected", k / 10, (0.0, 1.0)) for truth, k in counts.items()
    )
    claim = _claim("flexact-2-table1-recovery", "flexact", "not supported", parts, budget=FLEXACT_BUDGET)
    return claim.with_changes(context={"chosen": chosen})


def test_table1_where_every_truth_chose_sigmoid_says_sigmoid_whatever_the_truth():
    chosen = {truth: {"sigmoid": 10} for truth in ("relu", "sigmoid", "tanh", "leaky_relu")}
    chosen["identity"] = {"sigmoid": 4, "identity": 6}
    text = _short(flexact.finding(_table1(chosen)))
    assert text == (
        "With the regulariser the router picks Sigmoid whatever the truth: it never recovers ReLU, Tanh or LeakyReLU "
        "(16 of 50 networks recovered theirs)."
    )
    mixed = {"relu": {"leaky_relu": 10}, "sigmoid": {"sigmoid": 10}, "tanh": {"sigmoid": 10}}
    text = _short(flexact.finding(_table1(mixed)))
    assert "it never recovers ReLU, Tanh or LeakyReLU (it picks LeakyReLU and Sigmoid)" in text
    assert "every run recovers Sigmoid" in text


def test_what_the_router_picked_is_counted_from_the_runs():
    rows = pd.DataFrame(
        {
            "variant": ["flexact a=0.3"] * 4 + ["flexact a=0"],
            "k": [5.0, 5.0, 5.0, 20.0, 5.0],
            "ground_truth": ["relu", "relu", "tanh", "relu", "relu"],
            "selected": ["sigmoid", "sigmoid", "sigmoid", "relu", "relu"],
            "mse": [0.1, 0.1, 0.2, 0.0, 0.0],
        }
    )
    assert flexact.chosen_by_truth(rows) == {"relu": {"sigmoid": 2}, "tanh": {"sigmoid": 1}}


def test_appendix_b_says_the_selection_holds_but_the_mse_is_worse_than_without_the_regulariser():
    parts = (
        Part("Sigmoid selected, alpha >= 0.1", 1.0, (0.93, 1.0), 0.8, "above"),
        Part("plateau: change of log10 MSE over alpha in [0.4, 1]", 0.0075, (0.0035, 0.0116), 0.0, margin=0.301),
        Part("gain over alpha = 0", -0.7, (-0.78, -0.62), 0.0, "above"),
    )
    claim = _claim("flexact-4-appendix-b-alpha", "flexact", "not supported", parts, budget=FLEXACT_BUDGET)
    assert _short(flexact.finding(claim)) == (
        "Sigmoid is chosen in every run at alpha >= 0.1 and the MSE plateaus from alpha 0.4, but it is 5x that of "
        "alpha = 0 (the paper: 30x lower)."
    )


def test_flexact_tags_its_reruns_at_the_papers_scale_and_its_modified_method_as_a_sensitivity_analysis():
    tag = flexact.fidelity(_table1({}))
    assert tag.level == "paper-scale" and "10 seeds against the paper's 5" in tag.detail
    bias = _claim("flexact-1-scale-bias-tanh", "flexact", "inconclusive", mde=0.1,
                  budget="b; k = 5; trend: each seed's slope over k in [0.03, 0.1, 5.0, 20.0]; more")  # fmt: skip
    tag = flexact.fidelity(bias)
    assert tag.level == "paper-scale" and "k varied over 0.03, 0.1, 5, 20 to test the trend" in tag.detail
    assert "(it fixes k = 5)" in tag.detail  # varying k tests the paper's stated trend; its method is unchanged
    modified = _claim("flexact-1-scale-bias-tanh-modified-method", "flexact", "not supported", mde=0.1)
    assert flexact.fidelity(modified).sensitivity_of == "flexact-1-scale-bias-tanh"


def test_xielu_ties_relu2_and_beats_swiglu_by_its_margin():
    parts = (
        Part("xIELU − ReLU²", 0.0029, (-0.0118, 0.0177), 0.0, "below", "bits/byte"),
        Part("xIELU − SwiGLU", -0.1662, (-0.2248, -0.1075), 0.0, "below", "bits/byte"),
    )
    claim = _claim("xielu-lm-token-matched", "xielu", "inconclusive", parts, mde=0.01,
                   context={"equivalence_margins": {"relu2": 0.023, "swiglu": 0.05}})  # fmt: skip
    text = _short(xielu.finding(claim))
    assert text == "On the same tokens xIELU ties ReLU² (within ±0.023) and beats SwiGLU by 0.17 bits/byte."
    claim = claim.with_changes(budget="131072 tokens per arm, 10 seeds; d_model 64, 3 layers")
    tag = xielu.fidelity(claim)
    assert tag.level == "reduced-scale" and "131072 tokens per arm" in tag.detail and "1.1B" in tag.detail
    timed = xielu.fidelity(claim.with_changes(claim_id="xielu-lm-compute-time-matched", kind="reviewer"))
    assert timed.level == "reviewer-test"


def test_smartmixed_only_the_rise_clears_the_margin_and_its_tags_name_the_router_rate():
    parts = (
        Part("ELU+SELU rise", 7.4, (4.0, 10.8), 3.0, "above"),
        Part("ReLU+LeakyReLU fall", 1.1, (-1.0, 2.5), 3.0, "above"),
    )
    claim = _claim("smartmixed-layerwise-preference", "smartmixed", "not supported", parts)
    assert _short(smartmixed.finding(claim)) == (
        "Only the ELU+SELU rise (+7.4 points) clears the 3-point margin; the ReLU+LeakyReLU fall is +1.1."
    )
    budget = ("step-matched; n = 5 seeds per cell (15 of 15 runs ok); fashion_mnist: 2000 training examples; 6 epochs "
              "per strategy, lr 0.001 (routers 400x), batch 128, tau 0.3, mode corrected")  # fmt: skip
    ranked = _claim("smartmixed-top3-step-matched", "smartmixed", "inconclusive", mde=1.0, budget=budget)
    tag = smartmixed.fidelity(ranked)
    assert tag.level == "modified-method" and "routers at 400x the weights' learning rate" in tag.detail
    assert "corrected Gumbel mode" in tag.detail and "6 epochs (the reference: 400)" in tag.detail
    assert smartmixed.fidelity(ranked.with_changes(kind="reviewer")).level == "reviewer-test"
    reference = "reference sweep, 20 networks; phase 1 only: 50 epochs, lr 0.001 (routers 1x), mode reference"
    tag = smartmixed.fidelity(_claim("smartmixed-layerwise-preference", "smartmixed", "supported", budget=reference))
    assert tag.level == "reduced-scale" and "50 phase-1 epochs," in tag.detail  # the reference's own phase 1


def test_the_routers_that_stay_uniform_are_said_to():
    units = "mean largest routing probability of a network's lowest layer at the freeze (uniform: 1/6)"
    claim = _claim("smartmixed-routers-commit", "smartmixed", "not supported", (), estimate=0.178,
                   ci=(0.1775, 0.1781), threshold=0.5, supports="above", units=units, kind="reviewer")  # fmt: skip
    assert _short(smartmixed.finding(claim)) == (
        "The routers barely leave uniform: the mean largest routing probability at the freeze is 0.178 "
        "(uniform 0.167, a choice 0.5)."
    )


def test_a_check_of_the_mathematics_says_whether_it_holds_and_is_an_exact_check():
    part = Part("distance of E|ReLU'(h)| from 1", 0.5, (0.5, 0.5), 0.1, "below")
    claim = _claim("propositions-6-appendix-b-relu-gradient", "propositions", "not supported", (part,),
                   title="App. B: ReLU's mean gradient magnitude is about 1", kind="mathematics",
                   budget="SymPy, exact for every sigma_h")  # fmt: skip
    assert _short(theory.finding(claim)) == (
        "App. B fails: the distance of E|ReLU'(h)| from 1 is 0.5, beyond the 0.1 tolerance."
    )
    assert theory.fidelity(claim) == Fidelity(
        "paper-scale", "an exact check of the statement as the paper gives it: SymPy, exact for every sigma_h"
    )


def test_the_modified_methods_scale_bias_names_its_truth_and_says_it_is_the_modified_method():
    parts = (Part("mass beyond fit at k = 5", 0.96, (0.93, 0.98), 0.5, "above"),)
    parts += (Part("its slope per log k", 0.027, (0.018, 0.036), 0.0, "above"),)
    claim = _claim("flexact-1-scale-bias-sigmoid-modified-method", "flexact", "supported", parts)
    text = _short(flexact.finding(claim))
    assert text.startswith("Under the modified method") and "Sigmoid truth" in text and "Method" not in text
    assert "grows with scale" in text


def test_an_undecided_depth_claim_only_hints_at_width_and_never_concludes():
    context = {
        "constant width": {"estimate": 11.8},
        "growing width": {"estimate": -2.1},
        "growing minus constant": {"estimate": -13.9, "ci": [-20.6, -7.3]},
    }
    claim = _claim("smartmixed-preference-follows-depth", "smartmixed", "inconclusive", mde=10.1, context=context)
    text = _short(smartmixed.depth(claim))
    assert "undecided at this n" in text and "hints that width plays a part" in text
    assert "depends on" not in text and "not on depth" not in text
    decided = smartmixed.depth(claim.with_changes(verdict="supported", mde=None))
    assert decided.endswith("the rise follows depth.")
