"""Two-level fractional factorial designs and the effects they estimate, with the run (seed) as the unit.

Why: one choice at a time cannot show a claim that holds only when two choices change together, and the full grid
of six choices is hundreds of specifications. A 2^(k-p) design of resolution IV estimates every main effect free
of two-way interactions, and each two-way interaction up to its alias chain ("lr x epochs = tau_end x
batch_size"), in 2^(k-p) specifications (Box, Hunter & Hunter, ch. 6). Generators name each generated factor's
column as a product ({"E": "ABC"}); effects are high minus low on the coded -1/+1 scale.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from actlab.stats.tdist import two_sided_t

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # factor letters as design tables write them (no I: it is the identity)


@dataclass(frozen=True)
class Design:
    """A two-level design: `runs` (n_specifications, n_factors) coded -1/+1; the defining relation's words."""

    factors: tuple[str, ...]
    runs: np.ndarray
    words: tuple[str, ...]  # e.g. ("ABCE", "BCDF", "ADEF") in factor letters

    @property
    def resolution(self) -> int:
        """Length of the shortest word (a full factorial has no words: resolution = infinity, here k + 1)."""
        return min((len(word) for word in self.words), default=len(self.factors) + 1)

    def letter(self, factor: str) -> str:
        return LETTERS[self.factors.index(factor)]


def fractional_factorial(factors: Sequence[str], generators: Mapping[str, str]) -> Design:
    """A full factorial in the first k - p factors (first factor fastest), each generated factor the product of
    the columns its word names.

    >>> design = fractional_factorial(["lr", "epochs", "tau"], {"C": "AB"})
    >>> design.runs.tolist(), design.words, design.resolution
    ([[-1, -1, 1], [1, -1, -1], [-1, 1, -1], [1, 1, 1]], ('ABC',), 3)
    """
    factors = tuple(factors)
    if len(factors) > len(LETTERS) or len(set(factors)) != len(factors):
        raise ValueError(f"fractional_factorial: need distinct factor names, at most {len(LETTERS)}, got {factors}")
    letters = LETTERS[: len(factors)]
    generated = [letter for letter in letters if letter in generators]
    basic = [letter for letter in letters if letter not in generators]
    if generated != list(letters[len(basic) :]):
        raise ValueError(f"fractional_factorial: generators must define the last factors, got {dict(generators)}")
    for letter, word in generators.items():
        if not word or any(part not in basic for part in word):
            raise ValueError(
                f"fractional_factorial: generator {letter} = {word!r} must be a word of basic factors {basic}"
            )
    full = np.array(list(itertools.product([-1, 1], repeat=len(basic))))[:, ::-1]  # first factor changes fastest
    columns = {letter: full[:, i] for i, letter in enumerate(basic)}
    for letter in generated:
        columns[letter] = np.prod([columns[part] for part in generators[letter]], axis=0)
    runs = np.column_stack([columns[letter] for letter in letters]).astype(int)
    return Design(factors, runs, _defining_words(generators))


def _defining_words(generators: Mapping[str, str]) -> tuple[str, ...]:
    """Every product of the generator words (I = ABCE, I = BCDF, ... and their products), letters sorted."""
    basic_words = [frozenset(word + letter) for letter, word in generators.items()]
    words = set()
    for size in range(1, len(basic_words) + 1):
        for combo in itertools.combinations(basic_words, size):
            product: frozenset[str] = frozenset()
            for word in combo:
                product = product ^ word  # letters squared are the identity
            words.add("".join(sorted(product)))
    return tuple(sorted(words, key=lambda w: (len(w), w)))


@dataclass(frozen=True)
class Effect:
    """High minus low of the per-run value, with its t interval; `terms`: the aliased terms it stands for."""

    terms: tuple[tuple[str, ...], ...]
    estimate: float
    ci_low: float
    ci_high: float
    p: float

    @property
    def order(self) -> int:
        return len(self.terms[0])

    @property
    def label(self) -> str:
        """'lr' or 'lr x epochs = tau_end x batch_size'."""
        return " = ".join(" x ".join(term) for term in self.terms)


@dataclass(frozen=True)
class EffectsModel:
    """The regression behind `effects`, built once per design and `fit` to any values: `X` (n_runs, n_columns)
    holds the intercept, estimable main effects and two-way chains; `inverse` is (X'X)^-1."""

    X: np.ndarray
    terms: tuple[tuple[tuple[str, ...], ...], ...]
    inverse: np.ndarray

    @classmethod
    def build(cls, coded: np.ndarray, factors: Sequence[str]) -> EffectsModel:
        coded = np.asarray(coded, dtype=float)
        factors = tuple(factors)
        if coded.ndim != 2 or coded.shape[1] != len(factors):
            raise ValueError(f"effects: coded must be runs x {len(factors)} factors, got {coded.shape}")
        columns: list[np.ndarray] = [np.ones(len(coded))]
        terms: list[list[tuple[str, ...]]] = [[()]]
        candidates = [((name,), coded[:, index]) for index, name in enumerate(factors)]
        candidates += [
            ((factors[i], factors[j]), coded[:, i] * coded[:, j])
            for i, j in itertools.combinations(range(len(factors)), 2)
        ]
        for term, column in candidates:
            if np.ptp(column) == 0:
                continue
            alias = next((k for k, kept in enumerate(columns) if _same_up_to_sign(kept, column)), None)
            if alias is not None:
                if len(terms[alias][0]) == len(term) == 2:  # aliased with an earlier two-way column: one chain
                    terms[alias].append(term)
                continue  # aliased with a main effect or the mean (resolution III or less): not estimable
            if np.linalg.matrix_rank(np.column_stack([*columns, column])) > len(columns):
                columns.append(column)
                terms.append([term])
            # else: a combination of the columns kept (e.g. one change at a time): not separately estimable
        X = np.column_stack(columns)
        return cls(X, tuple(tuple(chain) for chain in terms), np.linalg.inv(X.T @ X))

    def fit(self, values: np.ndarray, confidence: float = 0.95) -> list[Effect]:
        """Each effect of `values` (n_runs,), with its t interval on N - p degrees of freedom (NaN without any)."""
        values = np.asarray(values, dtype=float)
        if values.shape != (self.X.shape[0],) or not np.all(np.isfinite(values)):
            raise ValueError(f"effects: need {self.X.shape[0]} finite values, got shape {values.shape}")
        coef, df, sigma2 = self.solve(values)
        t = two_sided_t(confidence, df) if df > 0 else math.nan
        tolerance = 1e-9 * max(1.0, float(np.max(np.abs(values)))) if values.size else 0.0
        found = []
        for k in range(1, self.X.shape[1]):
            estimate = 2 * float(coef[k])
            if abs(estimate) < tolerance:  # rounding noise of an exact fit, not an effect
                estimate = 0.0
            se = 2 * math.sqrt(self.inverse[k, k] * sigma2) if math.isfinite(sigma2) else math.nan
            found.append(Effect(self.terms[k], estimate, estimate - t * se, estimate + t * se, _p(estimate, se, df)))
        return found

    def solve(self, values: np.ndarray) -> tuple[np.ndarray, int, float]:
        """(coefficients, residual degrees of freedom, residual variance: NaN without any) of `values` (n_runs,)."""
        coef = self.inverse @ (self.X.T @ values)
        df = len(values) - self.X.shape[1]
        residual = values - self.X @ coef
        return coef, df, float(residual @ residual / df) if df > 0 else math.nan

    @property
    def mains(self) -> list[int]:
        """The columns of the estimable main effects."""
        return [k for k in range(1, self.X.shape[1]) if len(self.terms[k][0]) == 1]


def _p(estimate: float, se: float, df: int) -> float:
    """Two-sided t p of `estimate` with standard error `se`; an exact fit (se 0) gives 0 or 1, none NaN."""
    if se > 0:
        return float(2 * scipy_stats.t.sf(abs(estimate) / se, df))
    return math.nan if not math.isfinite(se) else (0.0 if estimate != 0 else 1.0)


def effects(coded: np.ndarray, values: np.ndarray, factors: Sequence[str], confidence: float = 0.95) -> list[Effect]:
    """Main effects and two-way interactions of `values` (n_runs,) on `coded` settings (n_runs, n_factors) by OLS:
    aliased two-way columns merge into one chain, a column that combines others is left out, NaN runs are dropped.

    >>> design = fractional_factorial(["lr", "epochs", "tau"], {"C": "AB"})
    >>> [(e.label, e.estimate) for e in effects(design.runs, np.array([1.0, 3.0, 1.0, 3.0]), design.factors)]
    [('lr', 2.0), ('epochs', 0.0), ('tau', 0.0)]
    """
    coded = np.asarray(coded, dtype=float)
    values = np.asarray(values, dtype=float)
    if coded.ndim != 2 or coded.shape[0] != values.size:
        raise ValueError(f"effects: coded must have one row per value ({values.size}), got {coded.shape}")
    keep = np.isfinite(values)
    return EffectsModel.build(coded[keep], factors).fit(values[keep], confidence)


def _same_up_to_sign(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b) or np.array_equal(a, -b))


# ---------------------------------------------------------------- main effects, tested as the factorial they are
@dataclass(frozen=True)
class MainEffectTest:
    """One factor's main effect (high minus low) against the pooled residual variance of every run, tested two-sided
    at alpha / m over the m factors (Bonferroni); `aliases`: what the estimate also carries (in a resolution IV
    fraction, three-factor interactions only)."""

    factor: str
    estimate: float
    se: float
    ci_low: float  # at 1 - alpha / m
    ci_high: float
    p: float  # unadjusted
    p_adjusted: float  # Bonferroni over the m factors
    found: bool
    aliases: str = ""


def main_effect_tests(
    model: EffectsModel, values: np.ndarray, alpha: float = 0.05, design: Design | None = None
) -> tuple[list[MainEffectTest], float, int]:
    """(the main-effect tests, the pooled residual SD, its degrees of freedom) of `values` (n_runs,) on `model`.

    The residual variance pools every run's residual from the model of main effects and two-way chains (two seeds
    per specification of a 2^(6-2) fraction: 32 runs - 14 columns = 18 df), so a factor's test does not rest on
    the few seeds of one specification.
    """
    values = np.asarray(values, dtype=float)
    mains = model.mains
    if not mains:
        return [], math.nan, 0
    coef, df, sigma2 = model.solve(values)
    sigma = math.sqrt(sigma2)
    m = len(mains)
    t = two_sided_t(1 - alpha / m, df) if df > 0 else math.nan
    found = []
    for k in mains:
        factor = model.terms[k][0][0]
        estimate = 2 * float(coef[k])
        se = 2 * math.sqrt(float(model.inverse[k, k])) * sigma
        p = _p(estimate, se, df)
        p_adjusted = min(1.0, m * p) if math.isfinite(p) else math.nan
        aliases = alias_chain(design, factor) if design is not None else ""
        found.append(
            MainEffectTest(
                factor, estimate, se, estimate - t * se, estimate + t * se, p, p_adjusted, p_adjusted < alpha, aliases
            )
        )
    return found, sigma, df


def alias_chain(design: Design, factor: str) -> str:
    """The interactions a main effect is aliased with, up to three factors (I = ABCE = ADEF: A = BCE = DEF).

    >>> alias_chain(fractional_factorial(["lr", "ep", "tau", "x1", "bs", "init"], {"E": "ABC", "F": "BCD"}), "lr")
    'lr = ep x tau x bs = x1 x bs x init'
    """
    letter = design.letter(factor)
    chain = [factor]
    for word in design.words:
        product = sorted(set(word) ^ {letter})
        if len(product) <= 3:
            chain.append(" x ".join(design.factors[LETTERS.index(part)] for part in product))
    return " = ".join(chain)


def main_effect_mde(model: EffectsModel, sigma: float, alpha: float, power: float) -> float:
    """The smallest main effect (high minus low) that the Bonferroni main-effect test finds with `power`, exactly
    (noncentral t): the test's t has df = residual df and noncentrality effect / se, the same as a one-sample t
    test on df + 1 units with d = effect / (se sqrt(df + 1)); the largest over the factors."""
    from actlab.stats.tdist import standardised_mde

    mains = model.mains
    df = model.X.shape[0] - model.X.shape[1]
    if not mains or df < 1 or not math.isfinite(sigma):
        return math.nan
    d = standardised_mde(df + 1, alpha / len(mains), power)
    se = max(2 * math.sqrt(float(model.inverse[k, k])) * sigma for k in mains)
    return d * math.sqrt(df + 1) * se
