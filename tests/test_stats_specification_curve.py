"""The specification-curve rule on known answers: a constant effect with some specifications merely inconclusive
does not "depend on" anything; opposite decisive verdicts do; heterogeneity counts only beside a decisive verdict
other than the baseline's; the ANOVA p against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from actlab.stats.specification_curve import combine, combined_heterogeneity_p, heterogeneity_p


def test_combine_a_constant_effect_with_inconclusive_alternatives_does_not_depend():
    outcome = combine("supported", {"tau 0.1": "inconclusive", "tau 1.0": "supported", "50 epochs": "inconclusive"},
                      choice_of={"tau 0.1": "tau", "tau 1.0": "tau", "50 epochs": "phase-1 length"},
                      heterogeneity=0.4)  # fmt: skip
    assert outcome.depends_on is None and (outcome.stable, outcome.total) == (2, 4)


def test_combine_opposite_decisive_verdicts_depend_on_their_choice():
    outcome = combine("supported", {"tau 0.1": "not supported", "tau 1.0": "supported", "50 epochs": "inconclusive"},
                      choice_of={"tau 0.1": "tau", "tau 1.0": "tau", "50 epochs": "phase-1 length"})  # fmt: skip
    assert outcome.depends_on == "tau" and (outcome.stable, outcome.total) == (2, 4)
    equivalent = combine("equivalent", {"x": "supported"})
    assert equivalent.depends_on == "x"


def test_combine_counts_heterogeneity_only_beside_a_differing_decisive_verdict():
    differing = combine("inconclusive", {"a": "supported", "b": "inconclusive"}, heterogeneity=0.001)
    assert differing.depends_on == "a" and differing.heterogeneity_p == 0.001
    homogeneous = combine("inconclusive", {"a": "supported", "b": "inconclusive"}, heterogeneity=0.4)
    assert homogeneous.depends_on is None
    merely_inconclusive = combine("supported", {"a": "inconclusive", "b": "supported"}, heterogeneity=0.001)
    assert merely_inconclusive.depends_on is None  # supported -> inconclusive is never dependence
    same = combine("supported", {"a": "supported", "b": "supported"}, heterogeneity=0.001)
    assert same.depends_on is None and same.stable == same.total == 3


def test_heterogeneity_is_scipy_one_way_anova_and_bonferroni_over_components():
    rng = np.random.default_rng(0)
    groups = [rng.normal(mean, 1.0, size=6) for mean in (0.0, 0.5, 2.0)]
    assert heterogeneity_p(groups) == pytest.approx(stats.f_oneway(*groups).pvalue)
    flat = [rng.normal(0.0, 1.0, size=6) for _ in range(3)]
    both = combined_heterogeneity_p([groups, flat])
    assert both == pytest.approx(min(1.0, 2 * min(heterogeneity_p(groups), heterogeneity_p(flat))))
    assert np.isnan(heterogeneity_p([np.ones(3)]))  # one group: nothing to compare
