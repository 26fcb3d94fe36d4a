"""The exact small-n MDE (issue AE, item 4): the noncentral t's power at the returned d is the target, with no
cap on d (statsmodels' `solve_power` stopped at d = 10: 10.0 at n = 2, where the exact d is 29.6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from actlab.stats.tdist import standardised_mde


def _nct_power(d: float, n: int, alpha: float) -> float:
    """P(|T| > t_crit), T ~ noncentral t(n - 1, d sqrt(n)), straight from scipy.stats.nct (the lower tail as the
    upper tail of -nc: nct.cdf there is NaN at n = 3, d = 5.5)."""
    critical = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = d * math.sqrt(n)
    return float(stats.nct.sf(critical, n - 1, nc) + stats.nct.sf(critical, n - 1, -nc))


def _quadrature_power(d: float, n: int, alpha: float) -> float:
    """The same power from its definition, T = (Z + nc) / sqrt(V / df), integrated over V ~ chi2(df): no nct."""
    df, critical, nc = n - 1, stats.t.ppf(1 - alpha / 2, n - 1), d * math.sqrt(n)

    def given(v: float) -> float:
        bound = critical * math.sqrt(v / df)
        return (stats.norm.sf(bound - nc) + stats.norm.cdf(-bound - nc)) * stats.chi2.pdf(v, df)

    return float(integrate.quad(given, 0, np.inf, limit=200)[0])


@pytest.mark.parametrize(
    ("n", "alpha", "power"),
    [(2, 0.025, 0.9), (3, 0.025, 0.9), (5, 0.025, 0.9), (2, 0.05, 0.8), (3, 0.05, 0.8), (5, 0.05, 0.8)],
)
def test_the_small_n_mde_is_the_noncentral_t_solution(n, alpha, power):
    d = standardised_mde(n, alpha, power)
    assert _nct_power(d, n, alpha) == pytest.approx(power, abs=1e-6)
    assert _quadrature_power(d, n, alpha) == pytest.approx(power, abs=1e-6)
    assert _nct_power(0.99 * d, n, alpha) < power  # the smallest such d: power rises with d


def test_two_seeds_need_an_effect_of_29_6_sds_not_the_solvers_cap_of_10():
    """The issue's figures: exact d 29.6 at n = 2, two-sided alpha 0.025, 90% power; 5.55 at n = 3 (not 5.27);
    and at d = 10 the power is only 0.42."""
    assert standardised_mde(2, 0.025, 0.9) == pytest.approx(29.6, abs=0.05)
    assert standardised_mde(3, 0.025, 0.9) == pytest.approx(5.55, abs=0.005)
    assert _nct_power(10.0, 2, 0.025) == pytest.approx(0.42, abs=0.005)


def test_a_power_at_or_below_alpha_is_refused():
    with pytest.raises(ValueError, match="alpha < power"):
        standardised_mde(5, 0.05, 0.04)
    with pytest.raises(ValueError, match="n >= 2"):
        standardised_mde(1, 0.05, 0.8)
