"""A claim that a candidate beats every one of its comparators on the same seeds: evidence, rule, parts and
operating characteristics, shared by the comparison's claims and xIELU's ("lower loss than ReLU² and SwiGLU").

Data (`Comparisons`): per seed, the candidate's improvement over each comparator, (n, k), positive = better, on the
seeds where all of them trained; and how many seeds the candidate diverged on where a comparator trained.

Statistics (`statistics`, via `actlab.stats.smaller_effect`): the estimate is the smallest improvement; its interval
is simultaneous over the claim's own k comparisons (Bonferroni), so "supported" and "not supported" each err at most
(1 - c)/2 at the null boundary; TOST is intersection-union. The same function reads one data set (a claim: batch 1)
or a thousand simulated ones. The MDE a claim quotes (`claim_mde`) is at that level and family, for the joint win
at the comparisons' observed correlation (`joint_mde`), over the comparisons that keep the verdict undecided.

What the data rule out (`ruled_out`): when a deciding comparison's simultaneous interval lies short of the paper's
effect, the claim says so (`actlab.claim.RuledOut`), with its test, p and simulated error rate (`ruled_out_rate`).

"Supported" means better than every comparator *by any amount*. Whether the improvement also clears the margin is
shown beside the verdict (`past_margin`), and the simulations report how often "supported" comes when every true
improvement is half its margin, so a reader sees that a tiny effect can be "supported". `supports="above"` shows
improvements, `"below"` differences in a lower-is-better metric (`oriented` turns one into the other).

`operating` draws normal data at the observed covariance (the same seeds: correlated) and n, and decides it with
`statistics`, `rule_inputs` and `rule_beats_baselines`, the code the real claim is decided with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from actlab.claim import OperatingCharacteristics, Part, RuledOut, rule_out
from actlab.errors import require_finite
from actlab.stats import calibrate
from actlab.stats import smaller_effect as se
from actlab.stats.binomial import clopper_pearson
from actlab.stats.calibrate import ScenarioSpec, Truth, operating_characteristics
from actlab.stats.sample_size import smallest_n
from actlab.stats.tdist import standardised_mde, t_quantile

POWER = 0.8  # the power an MDE and an "n needed" are stated at
HALF_MARGIN = "every improvement half its margin"  # the scenario that shows what "by any amount" means
# An outcome is listed as out of reach at this n if even its most favourable truth gives it less often than this:
# the power an MDE promises, so "reachable" means what "detectable" means
REACHABLE = POWER
N_NEEDED_SIMULATIONS = 2000  # per n tried when searching for the n an unreachable outcome needs
N_NEEDED_LIMIT = 2000  # seeds: beyond this the page says "more than" (a CPU study's budget is far below it)
MDE_DRAWS = 20_000  # simulated data sets behind a joint MDE: its 80% quantile to about 0.5% of itself
MDE_CHUNK = 2_000
_NOT_FINITE = "a claim needs finite numbers; a diverged arm is counted in `diverged`, never passed as NaN"


@dataclass(frozen=True)
class Comparisons:
    """One candidate's per-seed improvements over its comparators, `values` (n, k), positive = candidate better;
    `margins`: each comparison's equivalence margin in the claim's unit (None: no equivalence test)."""

    comparators: tuple[str, ...]
    values: np.ndarray
    diverged: int
    seeds: int
    margins: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=float).reshape(-1, len(self.comparators))
        if not np.all(np.isfinite(values)):
            raise ValueError(f"Comparisons: non-finite improvements; {_NOT_FINITE}")
        if self.margins is not None and (len(self.margins) != len(self.comparators) or min(self.margins) <= 0):
            raise ValueError(f"Comparisons: need one positive margin per comparator, got {self.margins}")
        object.__setattr__(self, "values", values)

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    @property
    def testable(self) -> bool:
        """At least two complete seeds, and every comparison's improvements vary (else no interval, no MDE)."""
        return self.n >= 2 and bool(np.all(self.values.std(axis=0, ddof=1) > 0))


@dataclass(frozen=True)
class Statistics:
    """`statistics`'s result over a batch of data sets (arrays (batch,) or (batch, k)), improvement orientation."""

    smaller: se.SmallerEffect
    component_mean: np.ndarray
    equivalence_p: np.ndarray | None
    tost_low: np.ndarray | None  # each comparison's (1 - 2 alpha) interval: the one its TOST reads
    tost_high: np.ndarray | None
    n: int


def statistics(
    values: np.ndarray, *, confidence: float, margins: Sequence[float] | None, alpha: float | None = None
) -> Statistics:
    """The statistics of every data set in `values` (batch, n, k); see the module docstring.

    TOST with a margin per comparison: each comparison is divided by its margin first (a t test does not change
    when its values are scaled), so `stats.smaller_effect.equivalence_p` tests every one within +-1; the interval it
    reads is each comparison's (1 - 2 alpha) t interval (`alpha` the rule's level, default 1 - confidence).
    """
    c = se.components(values)
    with np.errstate(invalid="ignore"):  # a mean exactly on a threshold: its t is 0, the discarded branch 0 * inf
        smaller = se.smaller_effect(c, threshold=0.0, confidence=confidence, power=POWER)
        if margins is None:
            return Statistics(smaller, c.mean, None, None, None, c.n)
        scale = np.asarray(margins, dtype=float)
        equivalence = se.equivalence_p(se.components(values / scale), margin=1.0)
        low, high, _ = se.component_intervals(c, confidence=1 - 2 * (1 - confidence if alpha is None else alpha))
    return Statistics(smaller, c.mean, equivalence, low, high, c.n)


def rule_beats_baselines(
    estimate: float,
    ci: tuple[float, float],
    supports: str,
    diverged: int,
    alpha: float,
    equivalence_p: float | None = None,
    **details: object,
) -> str:
    """Not supported if the candidate diverged on a seed where a baseline trained (blowing up is not beating), or
    if the interval lies wholly on the side against the claim (worse than some baseline; the interval is
    simultaneous over the claim's baselines); supported if it lies wholly on the supporting side (better than
    every baseline); equivalent if every difference is within its margin (TOST, each at alpha); else inconclusive."""
    require_finite("rule_beats_baselines", _NOT_FINITE, estimate=estimate, ci_low=ci[0], ci_high=ci[1])
    if supports not in ("above", "below"):
        raise ValueError(f"rule_beats_baselines: supports must be 'above' or 'below', got {supports!r}")
    if diverged > 0:
        return "not supported"
    low, high = ci if supports == "above" else (-ci[1], -ci[0])  # as improvements: > 0 is better
    if high < 0:
        return "not supported"
    if low > 0:
        return "supported"
    if equivalence_p is not None and equivalence_p < alpha:
        return "equivalent"
    return "inconclusive"


MARGIN_SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)  # the sensitivity strip: the registered margins times these
TESTS = {
    "supported": "paired t tests: every improvement above 0, by any amount (the largest p, Bonferroni over the "
    "baselines)",
    "not supported": "paired t tests: some improvement below 0 (the smallest p, Bonferroni over the baselines)",
    "equivalent": "TOST: every difference within +-its margin (the largest of the one-sided p's)",
}
DIVERGED_TEST = "divergence: the candidate diverged on a seed where a baseline trained (no test needed: p = 0)"


def deciding_test(verdict: str, diverged: int) -> str:
    """The test whose p decided `verdict`, in words (inconclusive: the nearer of the directions)."""
    if diverged and verdict == "not supported":
        return DIVERGED_TEST
    return TESTS.get(verdict, "nearer of: " + "; ".join(TESTS.values()))


def deciding_p(ev: Statistics, verdict: str, diverged: int) -> float:
    """Data set 0's p of that test: 0 for a divergence, for an inconclusive verdict the nearest of the three tests."""
    if diverged:
        return 0.0
    if verdict == "equivalent" and ev.equivalence_p is not None:
        return float(ev.equivalence_p[0])
    if verdict == "inconclusive":
        return min(directional_ps(ev).values())
    return float(ev.smaller.p_value[0])


def directional_ps(ev: Statistics) -> dict[str, float]:
    """Data set 0's p of each test the rule could decide by (Bonferroni over the k comparisons, capped at 1):
    "supported" the largest, "not supported" the smallest among improvements below 0, "equivalent" TOST's.

    >>> values = np.array([[[1.0, 2.0], [1.5, 2.5], [2.0, 1.0], [1.2, 2.2]]])  # (batch, seeds, comparisons)
    >>> found = directional_ps(statistics(values, confidence=0.95, margins=None))
    >>> found["supported"] < 0.05 < found["not supported"]
    True
    """
    mean, p, k = ev.component_mean[0], ev.smaller.component_p[0], ev.component_mean.shape[-1]
    above = [min(1.0, k * float(pi)) if m > 0 else 1.0 for m, pi in zip(mean, p, strict=True)]
    below = [min(1.0, k * float(pi)) if m < 0 else 1.0 for m, pi in zip(mean, p, strict=True)]
    found = {"supported": max(above), "not supported": min(below)}
    if ev.equivalence_p is not None:
        found["equivalent"] = float(ev.equivalence_p[0])
    return found


def past_margin(ev: Statistics, margins: Sequence[float] | None) -> str:
    """Does every improvement clear its margin too (the claim asks only for "better")? "yes" / "no" / "not clear"
    from the simultaneous intervals; "" without margins."""
    if margins is None:
        return ""
    low, high = ev.smaller.component_low[0], ev.smaller.component_high[0]
    if all(lo > m for lo, m in zip(low, margins, strict=True)):
        return "yes"
    if any(hi < m for hi, m in zip(high, margins, strict=True)):
        return "no"
    return "not clear"


def margin_sensitivity(data: Comparisons, *, supports: str, alpha: float, confidence: float) -> list[tuple[float, str]]:
    """(smallest margin, verdict) with the margins scaled by each of `MARGIN_SCALES`: only "equivalent" can move."""
    if data.margins is None:
        return []
    found = []
    for scale in MARGIN_SCALES:
        margins = [scale * m for m in data.margins]
        verdict = verdicts(data.values[None], supports=supports, alpha=alpha, confidence=confidence, margins=margins)
        found.append((min(margins), "not supported" if data.diverged else verdict[0]))
    return found


def oriented(mean: float, low: float, high: float, supports: str) -> tuple[float, tuple[float, float]]:
    """An improvement and its interval as the claim shows it: as is, or negated for a lower-is-better display.

    >>> oriented(0.2, 0.1, 0.3, "below")
    (-0.2, (-0.3, -0.1))
    """
    return (mean, (low, high)) if supports == "above" else (-mean, (-high, -low))


def rule_inputs(
    ev: Statistics, index: int, *, supports: str, alpha: float, diverged: int = 0
) -> tuple[float, tuple[float, float], dict[str, object]]:
    """(estimate, ci, inputs) of data set `index`, as `rule_beats_baselines` reads them."""
    smaller = ev.smaller
    estimate, ci = oriented(
        float(smaller.estimate[index]), float(smaller.low[index]), float(smaller.high[index]), supports
    )
    equivalence = None if ev.equivalence_p is None else float(ev.equivalence_p[index])
    inputs = {"supports": supports, "diverged": int(diverged), "alpha": alpha, "equivalence_p": equivalence}
    return estimate, ci, inputs


def verdicts(
    values: np.ndarray, *, supports: str, alpha: float, confidence: float, margins: Sequence[float] | None
) -> list[str]:
    """The rule's verdict on every data set of `values` (batch, n, k)."""
    ev = statistics(values, confidence=confidence, margins=margins, alpha=alpha)
    found = []
    for index in range(values.shape[0]):
        estimate, ci, inputs = rule_inputs(ev, index, supports=supports, alpha=alpha)
        found.append(rule_beats_baselines(estimate, ci, **inputs))
    return found


def parts(
    ev: Statistics, names: Sequence[str], *, verdict: str, supports: str, units: str, margins: Sequence[float] | None
) -> list[Part]:
    """One `Part` per comparison: its Bonferroni interval beside 0, or for "equivalent" the (1 - 2 alpha) interval
    TOST read, with its margin."""
    equivalent = verdict == "equivalent" and margins is not None
    low, high = (ev.tost_low, ev.tost_high) if equivalent else (ev.smaller.component_low, ev.smaller.component_high)
    found = []
    for i, name in enumerate(names):
        mean, ci = oriented(float(ev.component_mean[0, i]), float(low[0, i]), float(high[0, i]), supports)
        found.append(Part(name, mean, ci, 0.0, supports, units, float(margins[i]) if equivalent else None))
    return found


# ---------------------------------------------------------------- what the claim could detect
def observed_spread(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(SD (k,), correlation (k, k)) of the per-seed improvements `values` (n, k): what the MDE is computed at."""
    values = np.asarray(values, dtype=float)
    sd = values.std(axis=0, ddof=1)
    k = values.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = np.cov(values, rowvar=False, ddof=1).reshape(k, k) / np.outer(sd, sd)
    return sd, np.where(np.isfinite(correlation), correlation, np.eye(k))


def joint_mde(
    sd: Sequence[float],
    correlation: np.ndarray,
    n: int,
    *,
    confidence: float,
    which: Sequence[int] | None = None,
    power: float = POWER,
    seed: int = 0,
) -> float:
    """The improvement delta, the same over the comparisons `which` (default all), at which every one of them
    clears 0 together (each Bonferroni interval over all k comparisons above 0) with probability `power`, at SDs
    `sd` (k,) and the comparisons' `correlation` (k, k) on n seeds.

    Why joint: the rule says "supported" only when all clear 0 at once; 0.8^(1/k) per comparison gives 80% jointly
    only for independent comparisons, and at the correlation of the same seeds (about 0.8) it was the 90% effect.
    One comparison: exact (noncentral t). Several: data set s needs delta_s = max_i sd_i (t_crit s_i / sqrt(n) -
    zbar_i) (zbar, s: its standardised means and SDs), so the MDE is the `power` quantile of delta_s over
    `MDE_DRAWS` draws (common random numbers from `seed`: a deterministic number).

    >>> round(joint_mde([1.0], np.eye(1), 10, confidence=0.95), 4)  # one comparison: d(10, 0.05, 0.8)
    0.996
    >>> independent = joint_mde([1.0, 1.0], np.eye(2), 10, confidence=0.95)
    >>> abs(independent / standardised_mde(10, 0.025, 0.8**0.5) - 1) < 0.01  # 0.8^(1/k) is right when independent
    True
    """
    sd = np.asarray(sd, dtype=float)
    k = sd.size
    chosen = list(range(k)) if which is None else sorted({int(i) for i in which})
    if not chosen or n < 2:
        raise ValueError(f"joint_mde: need n >= 2 and at least one comparison, got n={n}, which={which}")
    each = 1 - (1 - confidence) / k  # the Bonferroni level the rule's intervals use, over all k comparisons
    if len(chosen) == 1:
        return float(standardised_mde(n, 1 - each, power) * sd[chosen[0]])
    critical = t_quantile(0.5 + each / 2, n - 1)
    factor = covariance_factor(np.asarray(correlation, dtype=float)[np.ix_(chosen, chosen)])
    rng = np.random.default_rng(seed)
    needed = []
    for start in range(0, MDE_DRAWS, MDE_CHUNK):
        z = rng.standard_normal((min(MDE_CHUNK, MDE_DRAWS - start), n, len(chosen))) @ factor.T
        shortfall = critical * z.std(axis=1, ddof=1) / np.sqrt(n) - z.mean(axis=1)
        needed.append((sd[chosen] * shortfall).max(axis=-1))
    return float(np.quantile(np.concatenate(needed), power))


def undecided(ev: Statistics, index: int = 0) -> list[int]:
    """The comparisons of data set `index` that keep "supported" from being said (interval not above 0), all when
    none does: those an MDE is quoted for, and where the paper's effect is looked for."""
    low = ev.smaller.component_low[index]
    found = [i for i, value in enumerate(low) if value <= 0]
    return found or list(range(low.size))


def claim_mde(data: Comparisons, ev: Statistics, *, confidence: float) -> tuple[float, list[int]]:
    """(MDE, the comparisons it is for): the joint 80% effect of the comparisons that keep the verdict undecided
    (`undecided`): an inconclusive verdict quotes what would decide it, not a comparison already won."""
    sd, correlation = observed_spread(data.values)
    which = undecided(ev)
    return joint_mde(sd, correlation, data.n, confidence=confidence, which=which), which


def mde_context(
    data: Comparisons, ev: Statistics, names: Sequence[str], *, confidence: float
) -> tuple[float, dict[str, object]]:
    """`claim_mde` and what the page says about it: the comparisons it is for (`mde_comparisons`) and, where that is
    not all of them, the MDE of all at once (`mde_every_comparison`: the one the operating characteristics' "MDE"
    truths use)."""
    mde, which = claim_mde(data, ev, confidence=confidence)
    context: dict[str, object] = {"mde_comparisons": [names[i] for i in which]}
    if len(which) < len(names):
        sd, correlation = observed_spread(data.values)
        context["mde_every_comparison"] = joint_mde(sd, correlation, data.n, confidence=confidence)
    return mde, context


# ---------------------------------------------------------------- what the data rule out
RULED_OUT_TEST = (
    "a paired t test of the deciding comparison's mean against the paper's effect, Bonferroni over the baselines "
    "(its simultaneous interval excludes the paper's effect)"
)


def ruled_out(
    ev: Statistics,
    names: Sequence[str],
    paper_effect: Sequence[float],
    *,
    supports: str,
    units: str,
    index: int = 0,
) -> RuledOut | None:
    """Does the interval of a deciding comparison (`undecided`) of data set `index` lie short of the paper's effect
    on it (`paper_effect`: improvements, one per comparison)? Decided by `actlab.claim.rule_out` on the comparisons'
    simultaneous intervals, so with the paper's effect true it says so at most 1 - confidence of the time (about
    half that: one side). An improvement larger than the paper's does not rule out its claim, so only "short of"
    counts."""
    low, high, mean = ev.smaller.component_low[index], ev.smaller.component_high[index], ev.component_mean[index]
    parts, values = [], {}
    for i, name in enumerate(names):
        estimate, ci = oriented(float(mean[i]), float(low[i]), float(high[i]), supports)
        parts.append(Part(name, estimate, ci, 0.0, supports, units))
        values[name] = oriented(float(paper_effect[i]), 0.0, 0.0, supports)[0]
    deciding = [names[i] for i in undecided(ev, index)]
    return rule_out(parts, values, deciding=deciding, sides=("short of",))


def ruled_out_p(ev: Statistics, names: Sequence[str], found: RuledOut, *, index: int = 0) -> float:
    """The Bonferroni-adjusted two-sided p of the deciding comparison's mean against the paper's effect: below
    1 - confidence exactly when its simultaneous interval excludes it."""
    from scipy import stats

    i = list(names).index(found.part)
    k, n = ev.component_mean.shape[-1], ev.n
    half = (ev.smaller.component_high[index, i] - ev.smaller.component_low[index, i]) / 2
    se = half / t_quantile(0.5 + ev.smaller.component_confidence / 2, n - 1)
    t = abs(found.estimate - found.paper_value) / se  # the same distance in either orientation
    return float(min(1.0, k * 2 * stats.t.sf(t, n - 1)))


def ruled_out_rate(
    data: Comparisons,
    paper_effect: Sequence[float],
    *,
    confidence: float,
    n_simulations: int,
    seed: int,
) -> tuple[float, float]:
    """(P(the paper's effect is ruled out), Monte-Carlo SE) when the paper's effect is true: data drawn at it with
    the observed covariance, decided by `ruled_out` (the code the claim uses). At most 1 - confidence."""
    n, k = data.values.shape
    factor = covariance_factor(np.cov(data.values, rowvar=False, ddof=1).reshape(k, k))
    rng = np.random.default_rng([seed, 7])
    draws = normal_draws(rng, paper_effect, factor, n_simulations, n)
    ev = statistics(draws, confidence=confidence, margins=None)
    names = [f"comparison {i}" for i in range(k)]
    hits = sum(
        ruled_out(ev, names, paper_effect, supports="above", units="", index=i) is not None
        for i in range(n_simulations)
    )
    rate = hits / n_simulations
    return rate, float(np.sqrt(rate * (1 - rate) / n_simulations))


def ruled_out_outcome(
    data: Comparisons,
    ev: Statistics,
    names: Sequence[str],
    paper_effect: Sequence[float],
    *,
    supports: str,
    units: str,
    confidence: float,
    n_simulations: int,
    seed: int,
) -> RuledOut | None:
    """The claim's ruled-out outcome with its test, p, bound and simulated error rate (None: nothing ruled out)."""
    found = ruled_out(ev, names, paper_effect, supports=supports, units=units)
    if found is None:
        return None
    rate = ruled_out_rate(data, paper_effect, confidence=confidence, n_simulations=n_simulations, seed=seed)
    return replace(
        found,
        test=RULED_OUT_TEST,
        p_value=ruled_out_p(ev, names, found),
        alpha=1 - confidence,
        error_rate=rate,
    )


# ---------------------------------------------------------------- divergence
@lru_cache(maxsize=1024)
def divergence_share(diverged: int, seeds: int, confidence: float) -> tuple[float, tuple[float, float]]:
    """The share of seeds the candidate diverged on, with its Clopper-Pearson interval: a share above 0 has a lower
    bound above 0, so its part lies wholly against the claim exactly when the rule says so.

    >>> share, (low, high) = divergence_share(1, 10, 0.95)
    >>> share, round(low, 4), round(high, 4)
    (0.1, 0.0025, 0.445)
    """
    if not 0 <= diverged <= seeds or seeds < 1:
        raise ValueError(f"divergence_share: need 0 <= diverged <= seeds, seeds >= 1; got {diverged}, {seeds}")
    return diverged / seeds, clopper_pearson(diverged, seeds, confidence)


def divergence_part(diverged: int, seeds: int, candidate: str, confidence: float) -> Part:
    share, ci = divergence_share(diverged, seeds, confidence)
    return Part(f"{candidate} diverged (share of seeds)", share, ci, 0.0, "below", "share of seeds")


def divergence_operating(
    seeds: int, *, confidence: float, alpha: float, n_simulations: int, seed: int
) -> OperatingCharacteristics:
    """The rule's divergence branch when the candidate never trained (nothing else to simulate): each seed diverges
    independently with probability q, and any divergence says "not supported"."""

    def simulate(rate: float, rng: np.random.Generator) -> str:
        count = int(rng.binomial(seeds, min(max(rate, 0.0), 1.0)))
        share, ci = divergence_share(count, seeds, confidence)
        return rule_beats_baselines(share, ci, supports="below", diverged=count, alpha=alpha)

    q80 = 1 - (1 - POWER) ** (1 / seeds)
    scenarios = [
        ScenarioSpec("null boundary", 0.0, errors=("supported", "not supported")),
        ScenarioSpec("MDE, against", q80, target="not supported"),
    ]
    missing = (
        "the candidate diverged on every seed, so no improvement was measured; only runs in which it trains "
        "can reach it"
    )
    return operating_characteristics(
        simulate,
        scenarios,
        n_simulations=n_simulations,
        seed=seed,
        design=f"{seeds} seeds, each diverging independently with probability q (the true effect column); with no "
        "divergence the verdict would come from improvements, which a candidate that never trained gives nothing to "
        "simulate from (counted as inconclusive)",
        unreachable={"supported": missing, "equivalent": missing},
    )


# ---------------------------------------------------------------- operating characteristics
def operating(
    data: Comparisons,
    *,
    supports: str,
    alpha: float,
    confidence: float,
    n_simulations: int,
    seed: int,
    paper_effect: Sequence[float] | None = None,
) -> OperatingCharacteristics:
    """How often `rule_beats_baselines` returns each verdict at this claim's n and observed covariance.

    Truths (improvements per comparison): all 0 (the null boundary), all +-MDE, the paper's effect; with margins,
    the comparison whose margin is fewest SDs at its margin against the candidate (least favourable for
    "equivalent"), and all 0 (its best case: below `REACHABLE` there it is listed as unreachable, with the n needed).
    """
    n, k = data.values.shape
    covariance = np.cov(data.values, rowvar=False, ddof=1).reshape(k, k)
    sd, correlation = observed_spread(data.values)
    mde = joint_mde(sd, correlation, n, confidence=confidence)  # every comparison clears 0 together, 80%
    sign = 1.0 if supports == "above" else -1.0

    factor = covariance_factor(covariance)

    def draw(rng: np.random.Generator, parameters: tuple[float, ...], batch: int) -> np.ndarray:
        return normal_draws(rng, parameters, factor, batch, n)

    def decide(draws: np.ndarray) -> list[str]:
        return verdicts(draws, supports=supports, alpha=alpha, confidence=confidence, margins=data.margins)

    def truth(name: str, improvements: Sequence[float], **spec: object) -> Truth:
        values = tuple(float(v) for v in improvements)
        return Truth(ScenarioSpec(name, sign * min(values) + 0.0, **spec), values)  # + 0.0: never -0

    truths = [
        truth("null boundary", [0.0] * k, errors=("supported", "not supported")),
        truth("MDE, supporting", [mde] * k, target="supported"),
        truth("MDE, against", [-mde] * k, target="not supported"),
    ]
    if paper_effect is not None:
        truths.append(truth("paper's effect", paper_effect, target="supported" if min(paper_effect) > 0 else None))
    if data.margins is not None:
        sd = np.sqrt(np.diag(covariance))
        tightest = int(np.argmin(np.asarray(data.margins) / sd))
        boundary = [0.0] * k
        boundary[tightest] = -data.margins[tightest]
        truths.append(truth("equivalence boundary", boundary, errors=("equivalent",)))
        truths.append(truth("equivalence, no difference", [0.0] * k, target="equivalent"))
        # "supported" means better by any amount: how often it says so when every improvement is half its margin
        truths.append(truth(HALF_MARGIN, [m / 2 for m in data.margins]))
    result = calibrate.operating(
        truths,
        draw,
        decide,
        n_simulations=n_simulations,
        seed=seed,
        design=f"{n} seeds, paired: each seed's improvements over {', '.join(data.comparators)} drawn jointly normal "
        "with the covariance observed in the runs (the same seeds: correlated), shifted to each truth",
    )
    unreachable = {}
    best = result.scenario("equivalence, no difference")
    if best is not None and best.power < REACHABLE:
        unreachable["equivalent"] = _equivalence_n_text(best, covariance, data.margins, n, alpha, confidence, seed)
    return OperatingCharacteristics(result.design, result.scenarios, result.seed, unreachable)


def covariance_factor(covariance: np.ndarray) -> np.ndarray:
    """F (k, k) with F F^T = `covariance` (k, k), by eigendecomposition: perfectly correlated comparisons make it
    singular, where no Cholesky factor exists.

    >>> factor = covariance_factor(np.array([[1.0, 1.0], [1.0, 1.0]]))
    >>> (factor @ factor.T).round(12).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    values, vectors = np.linalg.eigh(np.asarray(covariance, dtype=float))
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def normal_draws(rng: np.random.Generator, mean: Sequence[float], factor: np.ndarray, batch: int, n: int) -> np.ndarray:
    """(batch, n, k) draws ~ Normal(mean (k,), F F^T), `factor` F (k, k) from `covariance_factor`."""
    return np.asarray(mean, dtype=float) + rng.standard_normal((batch, n, factor.shape[0])) @ factor.T


def equivalence_n_needed(
    covariance: np.ndarray,
    margins: Sequence[float],
    *,
    start: int,
    alpha: float,
    confidence: float,
    seed: int,
    limit: int = N_NEEDED_LIMIT,
) -> int | None:
    """The smallest n at which the rule says "equivalent" with probability >= 80% when every true difference is 0,
    at `covariance` (k, k), simulated through `verdicts`; None beyond `limit`."""
    factor = covariance_factor(covariance)

    def probability(n: int) -> float:
        rng = np.random.default_rng([seed, n])
        draws = normal_draws(rng, [0.0] * len(margins), factor, N_NEEDED_SIMULATIONS, n)
        found = verdicts(draws, supports="above", alpha=alpha, confidence=confidence, margins=margins)
        return found.count("equivalent") / len(found)

    return smallest_n(probability, POWER, start=max(start, 2), limit=limit)


def _equivalence_n_text(best, covariance, margins, n, alpha, confidence, seed) -> str:  # noqa: ANN001
    needed = equivalence_n_needed(covariance, margins, start=n, alpha=alpha, confidence=confidence, seed=seed)
    share = (
        f"not with 80% probability: even when every true difference is 0, {n} seeds give it "
        f"{best.power:.0%} ± {best.standard_error(best.power):.0%} of the time"
    )
    if needed is None:
        return f"{share}; more than {N_NEEDED_LIMIT:,} seeds would be needed for 80%"
    return f"{share}; 80% needs {needed} seeds at the spread observed here (simulated)"


def spread_context(data: Comparisons) -> Mapping[str, object]:
    """The spread the simulation draws at: each comparison's SD, and for two their correlation."""
    sd = data.values.std(axis=0, ddof=1)
    context: dict[str, object] = {f"sd_{name}": float(s) for name, s in zip(data.comparators, sd, strict=True)}
    if data.values.shape[1] == 2 and np.all(sd > 0):
        context["correlation"] = float(np.corrcoef(data.values, rowvar=False)[0, 1])
    return context


def component_context(ev: Statistics, names: Sequence[str]) -> dict[str, object]:
    """Data set 0's comparisons as the page shows them: mean, Bonferroni interval, p unadjusted and adjusted."""
    k = len(names)
    smaller = ev.smaller
    return {
        name: {
            "improvement": float(ev.component_mean[0, i]),
            "ci": [float(smaller.component_low[0, i]), float(smaller.component_high[0, i])],
            "ci_level": float(smaller.component_confidence),
            "p": float(smaller.component_p[0, i]),
            "p_adjusted": min(1.0, k * float(smaller.component_p[0, i])),
        }
        for i, name in enumerate(names)
    }


def divergence_text(candidate: str, data: Comparisons, comparators: Sequence[str]) -> str:
    """The divergence that decided a verdict the intervals do not show ('' when none)."""
    if not data.diverged:
        return ""
    where = " or ".join(comparators)
    return (
        f"divergence: {candidate} diverged on {data.diverged} of {data.seeds} seeds where {where} trained "
        "(blowing up is not beating)"
    )
