"""Does a claim's primary verdict hold at the other settings the paper leaves open? The robustness rule.

Why a rule of its own that never replaces the verdict: most alternative specifications are small (2-4 seeds), and
a rule that let their point estimates override a decisive baseline fired on noise most of the time. So:

- an alternative counts only if *adequate*: decisive on its own, or its MDE (80% power, at its own n and spread)
  no larger than the claim's; the others are "too small to tell", listed with their n, never counted;
- the primary verdict is *contradicted* only by an adequate alternative's opposite decisive `family_verdict`, which
  the study computes at alpha / m for m alternatives (Bonferroni), so under any truth shared by every
  specification a correct primary verdict is contradicted with probability at most alpha;
- the robustness test's p is the smallest Bonferroni-adjusted p against the primary verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from actlab.claim import DECISIVE, Robustness, SpecificationCheck, opposite
from actlab.stats.factorial import EffectsModel, main_effect_mde
from actlab.stats.tdist import two_sided_t

POWER = 0.8  # "adequately powered": at least this power at the claim's MDE
_SAME_MDE = 1e-9  # relative slack when a specification's MDE equals the claim's (same n and spread)


@dataclass(frozen=True)
class SpecificationResult:
    """One alternative: `verdict` at the claim's level, `family_verdict` at alpha / m, `mde` in the direction of the
    claim's MDE (None: unreachable at its n), `p_against` its unadjusted p against the primary verdict."""

    label: str
    n: int
    verdict: str
    family_verdict: str
    estimate: float | None = None
    mde: float | None = None
    p_against: float | None = None


def is_adequate(verdict: str, mde: float | None, claim_mde: float | None) -> bool:
    """Decisive on its own, or its MDE (80% power) no larger than the claim's.

    >>> is_adequate("inconclusive", 0.2, 0.3), is_adequate("inconclusive", 0.4, 0.3)
    (True, False)
    >>> is_adequate("supported", None, 0.3)
    True
    """
    if verdict in DECISIVE:
        return True
    if mde is None or claim_mde is None or not (math.isfinite(mde) and math.isfinite(claim_mde)):
        return False
    return mde <= claim_mde * (1 + _SAME_MDE)


def assess(
    primary: str, claim_mde: float | None, results: Sequence[SpecificationResult], *, family: str = ""
) -> Robustness:
    """The primary verdict against every alternative in `results` (module docstring).

    >>> small = SpecificationResult("lr 0.01", 2, "inconclusive", "inconclusive", mde=0.5)
    >>> against = SpecificationResult("lr 0.1", 10, "not supported", "not supported", p_against=0.001)
    >>> r = assess("supported", 0.1, [small, against])
    >>> r.status, len(r.too_small), [c.label for c in r.contradicting], round(r.p, 3)
    ('contradicted', 1, ['lr 0.1'], 0.002)
    """
    m = len(results)
    checks = []
    for result in results:
        adequate = is_adequate(result.verdict, result.mde, claim_mde)
        p_family = None if result.p_against is None else min(1.0, m * float(result.p_against))
        checks.append(
            SpecificationCheck(
                label=result.label,
                n=int(result.n),
                verdict=result.verdict,
                family_verdict=result.family_verdict,
                adequate=adequate,
                contradicts=adequate and opposite(primary, result.family_verdict),
                estimate=result.estimate,
                mde=result.mde,
                p_family=p_family,
            )
        )
    text = family or f"Bonferroni over the {m} alternative specification{'s' if m != 1 else ''}"
    return Robustness(primary=primary, specifications=tuple(checks), family=text)


def contradicted(primary: str, family_verdicts: Sequence[str], adequate: Sequence[bool]) -> bool:
    """The rule's decision alone, for simulations: an adequate alternative decides the opposite way at alpha/m.

    >>> contradicted("supported", ["not supported", "inconclusive"], [True, False])
    True
    """
    return any(ok and opposite(primary, verdict) for verdict, ok in zip(family_verdicts, adequate, strict=True))


def simulated_rates(
    scenarios: Sequence[object], reversal: str | None = None
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """(worst P(contradicted) where one effect holds everywhere, P(contradicted) at the `reversal`), each with its
    Monte-Carlo SE, from `actlab.claim.Scenario`s."""
    same = [s for s in scenarios if s.contradicted is not None and s.name != reversal]
    worst = max(same, key=lambda s: s.contradicted, default=None)
    false_rate = None if worst is None else (worst.contradicted, worst.standard_error(worst.contradicted))
    found = next((s for s in scenarios if s.name == reversal and s.contradicted is not None), None)
    power = None if found is None else (found.contradicted, found.standard_error(found.contradicted))
    return false_rate, power


# ---------------------------------------------------------------- can the factorial find a reversal?
@dataclass(frozen=True)
class ReversalPower:
    """How well the curve's factorial finds one choice reversing a claim: a reversal of size `distance` (the effect
    at `distance` past the threshold at the choice's low level, as far on the other side at its high level: a main
    effect of 2 x distance), found when the main-effect test at alpha / m (Bonferroni over the m choices) is
    significant in the reversing direction. `power` is simulated (with its Monte-Carlo SE) at the pooled residual
    SD; `smallest` is the distance found with `target` power, exact (noncentral t)."""

    distance: float
    power: float
    standard_error: float
    smallest: float
    target: float
    units: str = ""

    def words(self) -> str:
        """'one choice's high level moving the effect from 0.49 past the threshold to as far short of it (units),
        ...'."""
        unit = f" ({self.units})" if self.units else ""
        return (
            f"one choice's high level moving the effect from {self.distance:.3g} past the threshold to as far short "
            f"of it{unit}, found by the factorial's main-effect test at alpha/m over the choices (Bonferroni)"
        )

    def smallest_words(self) -> str:
        unit = f" {self.units}" if self.units else ""
        return (
            f"the smallest reversal it finds with {self.target:.0%} power: +-{self.smallest:.3g}{unit} about the "
            "threshold"
        )


def factorial_reversal_power(
    model: EffectsModel,
    factor: str,
    distance: float,
    sigma: float,
    *,
    alpha: float = 0.05,
    target: float = POWER,
    n_simulations: int = 2000,
    seed: int = 0,
    units: str = "",
) -> ReversalPower:
    """Simulate runs of the design at the pooled residual SD `sigma` with `factor`'s high level reversing an effect
    `distance` past the threshold, fit the effects model and test every main effect at alpha / m: the share of
    simulations where `factor`'s effect is significant in the reversing direction."""
    columns = model.mains
    index = next((k for k in columns if model.terms[k][0][0] == factor), None)
    if index is None:
        raise ValueError(f"factorial_reversal_power: {factor!r} is not an estimable main effect of this design")
    rng = np.random.default_rng(seed)
    runs = model.X.shape[0]
    df = runs - model.X.shape[1]
    if df < 1:
        raise ValueError("factorial_reversal_power: the design leaves no residual degrees of freedom; add seeds")
    # the effect sits at +distance at the low level and -distance at the high one: values = -distance * coded
    values = -distance * model.X[:, index][:, None] + sigma * rng.standard_normal((runs, n_simulations))
    coef = model.inverse @ (model.X.T @ values)
    residual = values - model.X @ coef
    se = 2 * np.sqrt(model.inverse[index, index] * (residual * residual).sum(axis=0) / df)
    with np.errstate(divide="ignore", invalid="ignore"):  # sigma = 0: an exact fit, any effect is found
        t = 2 * coef[index] / se
    critical = two_sided_t(1 - alpha / len(columns), df)
    found = (np.abs(t) > critical) & (np.sign(t) == -np.sign(distance))
    power = float(found.mean())
    smallest = main_effect_mde(model, sigma, alpha, target) / 2
    return ReversalPower(abs(distance), power, math.sqrt(power * (1 - power) / n_simulations), smallest, target, units)
