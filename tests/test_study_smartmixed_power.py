"""The layer-wise claim's registered power analysis, and robustness as contrasts that can find a reversal (issue 56).

- `power.t_power` is the noncentral-t power of a two-sided one-sample t test: checked against a simulation of that
  test and, at large n, against the normal closed form; `networks_for_power` is the smallest n that reaches it.
- The pilot's figures in `power.PILOT` are those of its committed records (`pilot_reference.jsonl`), and the
  default `reference` sweep runs at least the registered n.
- `contrasts`: a reversal planted at one factor is found with >= 80% power at a design large enough, and the
  stated smallest findable reversal is where the simulated power crosses 80%.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from actlab.studies.smartmixed import contrasts, pilot, power
from actlab.studies.smartmixed import evidence as ev

SWEEPS = Path(__file__).resolve().parent.parent / "notebooks" / "smartmixed" / "sweeps"


@pytest.mark.parametrize(
    ("n", "delta", "sd", "alpha"), [(5, 2.0, 1.5, 0.025), (12, 1.0, 2.0, 0.05), (3, 4.0, 1.0, 0.05)]
)
def test_t_power_is_the_simulated_power_of_the_t_test(n, delta, sd, alpha):
    rng = np.random.default_rng(1)
    draws = delta + sd * rng.standard_normal((40_000, n))
    t = draws.mean(axis=1) / (draws.std(axis=1, ddof=1) / math.sqrt(n))
    simulated = float((np.abs(t) > stats.t.ppf(1 - alpha / 2, n - 1)).mean())
    assert power.t_power(n, delta, sd, alpha) == pytest.approx(simulated, abs=4 * math.sqrt(0.25 / 40_000))


def test_t_power_tends_to_the_normal_closed_form_and_has_no_cap_on_the_effect():
    z = stats.norm.ppf(0.975)
    closed = stats.norm.sf(z - 0.3 * math.sqrt(2000)) + stats.norm.cdf(-z - 0.3 * math.sqrt(2000))
    assert power.t_power(2000, 0.3, 1.0, 0.05) == pytest.approx(closed, abs=1e-3)
    # n = 2 at two-sided 0.025 and 90% power needs d ~ 29.6 (a solver capped at d = 10 returns 10 there)
    d = power.t_mde(2, 1.0, 0.025, 0.9)
    assert d == pytest.approx(29.6, abs=0.2) and power.t_power(2, 10.0, 1.0, 0.025) < 0.5


def test_networks_for_power_is_the_smallest_n_reaching_the_power_of_both_components():
    sd, margin = 3.5, 3.0
    n = power.networks_for_power(sd, margin, alpha=0.05, power=0.8, components=2)
    each = 0.8**0.5
    assert power.t_power(n, margin, sd, 0.025) >= each > power.t_power(n - 1, margin, sd, 0.025)
    # Guenther's closed form for the t test: n ~ ((z_{1 - a/2} + z_power) sd / delta)^2 + z_{1 - a/2}^2 / 2
    z = stats.norm.ppf(1 - 0.0125)
    approx = ((z + stats.norm.ppf(each)) * sd / margin) ** 2 + z**2 / 2
    assert abs(n - approx) <= 1


def test_pilot_figures_are_its_records_and_the_sweep_runs_the_registered_n():
    found = pilot.summary(power.PILOT_FILE)
    assert found["networks"] == power.PILOT.networks
    assert found["within_cell_sd"] == pytest.approx(power.PILOT.sd, abs=1e-4)
    assert found["mean"] == pytest.approx([power.PILOT.rise, power.PILOT.fall], abs=0.01)
    assert found["commitment"] == pytest.approx(power.PILOT.commitment, abs=1e-4)
    design = power.registered_design(3.0, 0.05, cells=2)
    spec = yaml.safe_load((SWEEPS / "default" / "reference.yml").read_text(encoding="utf-8"))
    cells = [e for e in spec["fixed"]["specifications"] if e["claim"] == "reference"]
    networks = sum(len(e.get("seeds", spec["seeds"])) for e in cells)
    assert len(cells) == design.cells and networks >= design.networks
    assert not set(spec["seeds"]) & {1000, 1001, 1002, 1003}  # never the pilot's seeds


def test_pilot_sd_pools_within_cell_variances_not_the_cells_levels():
    rng = np.random.default_rng(0)
    cells = {"a": rng.normal(0.0, 2.0, (400, 2)), "b": rng.normal(50.0, 2.0, (400, 2))}
    assert power.pilot_sd(cells) == pytest.approx(2.0, rel=0.08)


def _specs(n: int, shift: float, sd: float = 4.0, seed: int = 0) -> ev.Specifications:
    rng = np.random.default_rng(seed)
    base = {f"cell {i}": rng.normal(10.0, sd, (1, n, 2)) for i in range(2)}
    alternatives = {"tau": rng.normal(10.0 - shift, sd, (1, n, 2)), "lr": rng.normal(10.0, sd, (1, n, 2))}
    return ev.Specifications(base, alternatives, {"tau": "tau", "lr": "lr"})


def test_a_planted_reversal_is_found_with_80_percent_power_at_a_sufficient_design():
    # 16 networks per group, SD 4: a reversal of 8 points (from +4 past a margin to -4) at one choice
    specs = _specs(16, 0.0)
    found, se = contrasts.reversal_power(specs, 8.0, n_simulations=2000, seed=3)
    assert found - 3 * se >= 0.8
    assert contrasts.smallest_reversal(specs) < 8.0
    # and nothing is found when nothing is planted (family-level false "reversal" <= alpha / 2 + 3 SE)
    null, se0 = contrasts.reversal_power(specs, 0.0, n_simulations=2000, seed=4)
    assert null <= 0.025 + 3 * max(se0, 0.0035)


def test_the_stated_smallest_reversal_is_where_simulated_power_crosses_80_percent():
    specs = _specs(4, 0.0, seed=2)  # the curve's n: 4 networks an alternative
    smallest = contrasts.smallest_reversal(specs)
    power_at, se = contrasts.reversal_power(specs, smallest, n_simulations=4000, seed=5)
    # simulated at each group's own SD, the analytic one at the pooled SD: the same within Monte-Carlo error and
    # the SD heterogeneity of a 4-network sample
    assert power_at == pytest.approx(0.8, abs=0.05)
    below, _ = contrasts.reversal_power(specs, 0.7 * smallest, n_simulations=4000, seed=6)
    assert below < 0.8


def test_contrasts_flag_only_a_shift_against_the_primary_direction():
    found = contrasts.contrasts(_specs(30, 12.0, sd=2.0))
    by_label = {c.label: c for c in found.contrasts}
    assert (by_label["tau"].high[0] < 0).all() and not (by_label["lr"].high[0] < 0).any()
    assert found.reversed()[0] and found.level == pytest.approx(0.05 / 4)
    up = contrasts.contrasts(_specs(30, -12.0, sd=2.0))
    assert not up.reversed()[0]  # a larger effect is no reversal


def test_the_ranking_contrasts_find_an_architecture_where_smartmixed_falls_behind():
    from actlab.studies.smartmixed import claims

    rng = np.random.default_rng(0)
    levels = np.array([90.0, 89.0, 88.0, 87.0, 86.0, 85.0, 84.0])  # SmartMixed first, then the fixed ones
    cube = levels[None, None, :, None] + rng.normal(0, 0.3, (1, 3, 7, 12))
    cube[0, 2, 0] -= 6.0  # SmartMixed falls from first to last on the third architecture
    found = claims.ranking_contrasts(cube, np.array([12, 12, 12]), ["a", "b", "c"], 1.0, claims.Settings())
    assert found["reversed_at"] == ["c"] and "reversed at c" in found["line"]
    assert found["power"][0] >= 0.8  # a planted 2-point reversal at one architecture, 12 seeds, SD ~0.4


def test_the_depth_design_n_is_the_noncentral_t_solution_and_the_sweep_runs_fewer():
    design = power.depth_design(3.0, 0.05, profiles=2)
    sd, each_alpha, each_power = power.DEPTH_PLANNING.sd, 0.05 / 2, 0.8**0.5

    def exact(n: int) -> float:  # two-sided one-sample t test, noncentral t, written out here
        critical, nc = stats.t.ppf(1 - each_alpha / 2, n - 1), 3.0 / sd * math.sqrt(n)
        return float(stats.nct.sf(critical, n - 1, nc) + stats.nct.cdf(-critical, n - 1, nc))

    assert exact(design.networks) >= each_power > exact(design.networks - 1)
    assert design.total == 2 * design.networks and design.as_json()["planning"]["sd"] == sd
    spec = yaml.safe_load((SWEEPS / "default" / "reference.yml").read_text(encoding="utf-8"))
    profiles = [e for e in spec["fixed"]["specifications"] if e["claim"] == "depthwidth"]
    per_profile = min(len(e.get("seeds", spec["seeds"])) for e in profiles)
    # the 3-network pilot's SD asked for what the sweep runs; the sweep's own SD asks for more, and the claim says so
    assert design.pilot_networks <= per_profile < design.networks
