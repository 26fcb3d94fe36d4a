"""A tested claim as one typed value: what was asked, what was measured, what the rule decided, how often it errs.

Why a frozen dataclass: a verdict is read in many places (study pages, the index, `actlab calibrate`, the forest
plot, a user's script); a `Claim` is validated once, when made, and `Claim.from_json(claim.to_json()) == claim`.

A claim is computed, never typed: `decide` applies the study's rule `rule(estimate, ci, **inputs) -> verdict` to
the `Evidence` and stores the rule's source beside the verdict, the *primary* verdict at the registered design, its
statement, units and threshold read from its registered `Definition` (`actlab.registry`). `Robustness` (other
specifications) is shown beside it, never in its place; `OperatingCharacteristics` (`actlab.stats.calibrate`) say
how often the rule errs at its own n and spread.
"""

from __future__ import annotations

import dis
import inspect
import json
import math
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol

from actlab.io import _json_default

# What a decision rule may return (a closed set). "equivalent" needs a TOST margin; "not run": the experiment did
# not produce what the claim needs (e.g. routers that never left uniform).
VERDICTS = ("supported", "not supported", "inconclusive", "equivalent", "not run")
DECISIVE = ("supported", "not supported", "equivalent")
SUPPORTING = ("supported",)
AGAINST = ("not supported", "equivalent")
# The paper's mathematics (exact checks), its experiments, a test its reviewers asked for, or a demo / the zoo.
KINDS = ("mathematics", "experiment", "reviewer", "demo")
CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,119}")
MAX_TEXT = 20_000  # characters of any one text field: a claim is a summary, not a data dump


class ClaimError(ValueError):
    """A claim that cannot be made or read; the message names the claim and what is wrong."""


class RuleError(RuntimeError):
    """A claim's decision rule raised; the message names the claim, the cause keeps the rule's traceback."""


def is_verdict(verdict: Any) -> bool:
    """One of `VERDICTS`."""
    return isinstance(verdict, str) and verdict in VERDICTS


def is_decisive(verdict: str) -> bool:
    """True for a verdict that asserts something about the claim ("supported", "not supported", "equivalent")."""
    return verdict in DECISIVE


def opposite(a: str, b: str) -> bool:
    """True when one verdict supports the claim and the other decisively rejects it.

    >>> opposite("supported", "equivalent"), opposite("not supported", "equivalent")
    (True, False)
    >>> opposite("supported", "inconclusive")
    False
    """
    return (a in SUPPORTING and b in AGAINST) or (a in AGAINST and b in SUPPORTING)


def plain(value: Any) -> Any:
    """`value` as JSON would give it back, NaN and inf as None: JSON has no NaN, and the round trip through a claim
    file must give back an equal claim, so every input is stored in its JSON form from the start."""
    value = json.loads(json.dumps(value, default=_json_default, allow_nan=True))
    return _finite_or_none(value)


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite_or_none(item) for item in value]
    return value


def _number(claim_id: str, name: str, value: Any, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ClaimError(f"claim {claim_id}: {name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ClaimError(
            f"claim {claim_id}: {name} is {value}; a claim needs finite numbers (a NaN usually means a diverged "
            "run or too few seeds: drop or fix it before deciding)"
        )
    return value


def _interval(claim_id: str, ci: Any, where: str = "") -> tuple[float, float]:
    where = where or f"claim {claim_id}"
    if not (isinstance(ci, Sequence) and len(ci) == 2):
        raise ClaimError(f"{where}: ci must be (low, high), got {ci!r}")
    low, high = (_number(claim_id, "ci", bound) for bound in ci)
    if low > high:
        raise ClaimError(f"{where}: ci ({low}, {high}) has low > high")
    return low, high


def _count(where: str, n: Any) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ClaimError(f"{where}: n must be a whole number >= 0, got {n!r}")


def _text(claim_id: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ClaimError(f"claim {claim_id}: {name} must be text, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise ClaimError(f"claim {claim_id}: {name} is {len(value)} characters; at most {MAX_TEXT}")
    return value


def _check_fields(
    value: Any,
    where: str,
    *,
    texts: Sequence[str] = (),
    numbers: Sequence[str] = (),
    optional: Sequence[str] = (),
    interval: str = "",
) -> None:
    """Validate a frozen dataclass's fields in place: `texts` are text, `numbers` finite numbers (`optional` ones may
    be None), `interval` a (low, high) pair; numbers are stored as floats."""
    for name in texts:
        _text(where, name, getattr(value, name))
    for name in (*numbers, *optional):
        object.__setattr__(value, name, _number(where, name, getattr(value, name), optional=name in optional))
    if interval:
        object.__setattr__(value, interval, _interval(where, getattr(value, interval), where))


@dataclass(frozen=True)
class Evidence:
    """What one claim's rule reads from one set of runs: `inputs` are its keyword arguments, `context` is shown but
    not read, `p_value` the two-sided p of the primary test (None: no single test), for the family adjustment."""

    estimate: float
    ci: tuple[float, float]
    n: int
    inputs: Mapping[str, Any] = field(default_factory=dict)
    mde: float | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    p_value: float | None = None


@dataclass(frozen=True)
class Part:
    """One quantity a claim's rule decides on, as the forest plot draws it; `supports` ("above"/"below") is the side
    of the threshold that supports the claim, `margin` an equivalence test's band (threshold +- margin)."""

    name: str
    estimate: float
    ci: tuple[float, float]
    threshold: float | None = None
    supports: str | None = None
    units: str = ""
    margin: float | None = None
    untestable: str = ""

    def __post_init__(self) -> None:
        where = f"part {self.name!r}"
        texts = ("name", "units", "untestable")
        _check_fields(self, where, texts=texts, numbers=("estimate",), optional=("threshold", "margin"), interval="ci")
        if self.supports not in (None, "above", "below"):
            raise ClaimError(f"{where}: supports must be 'above', 'below' or None, got {self.supports!r}")
        if self.margin is not None and (self.margin <= 0 or self.threshold is None):
            raise ClaimError(f"{where}: an equivalence margin must be > 0 and have a threshold to centre on")


RULED_OUT_SIDES = ("short of", "beyond")  # the data lie short of the paper's effect (towards the null) or beyond it


@dataclass(frozen=True)
class RuledOut:
    """The paper's own effect lies outside the interval of the comparison that decides the claim: a decisive outcome
    about the paper's effect, shown beside the verdict (which answers the claim's own question, e.g. "better by any
    amount"). `paper_value` is the paper's effect on this part, on this run's scale; `side`: the estimate lies
    `short of` it (towards the null or past it) or `beyond` it. With a simultaneous interval at confidence c it errs
    (rules out a true paper's effect) at most 1 - c of the time; `error_rate` is that simulated (rate, MC SE)."""

    part: str
    paper_value: float
    estimate: float
    ci: tuple[float, float]
    side: str
    units: str = ""
    test: str = ""
    p_value: float | None = None
    alpha: float | None = None  # the bound on its error rate: 1 - the interval's (simultaneous) confidence
    error_rate: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        where = f"ruled-out part {self.part!r}"
        texts, numbers = ("part", "units", "test", "side"), ("paper_value", "estimate")
        _check_fields(self, where, texts=texts, numbers=numbers, optional=("p_value", "alpha"), interval="ci")
        if self.side not in RULED_OUT_SIDES:
            raise ClaimError(f"{where}: side must be one of {RULED_OUT_SIDES}, got {self.side!r}")
        if self.ci[0] <= self.paper_value <= self.ci[1]:
            raise ClaimError(f"{where}: the paper's value {self.paper_value} lies inside {self.ci}: nothing ruled out")
        if self.error_rate is not None:
            if not (isinstance(self.error_rate, Sequence) and len(self.error_rate) == 2):
                raise ClaimError(f"{where}: error_rate must be (probability, Monte-Carlo SE), got {self.error_rate!r}")
            object.__setattr__(self, "error_rate", tuple(_number(where, "error_rate", v) for v in self.error_rate))

    def text(self, digits: int = 3) -> str:
        """'the paper's effect is ruled out at this scale: xIELU − ReLU² 0.0029 [-0.0118, 0.0177] bits/byte excludes
        the paper's -0.023'."""
        unit = f" {self.units}" if self.units else ""
        interval = f"{self.estimate:.{digits}g}{unit} [{self.ci[0]:.{digits}g}, {self.ci[1]:.{digits}g}]"
        if self.side == "beyond":
            return (
                f"the data exceed the paper's effect at this scale: {self.part} {interval} lies beyond the paper's "
                f"{self.paper_value:.{digits}g}"
            )
        return (
            f"the paper's effect is ruled out at this scale: {self.part} {interval} excludes the paper's "
            f"{self.paper_value:.{digits}g}"
        )


def rule_out(
    parts: Sequence[Part],
    paper_values: Mapping[str, float],
    *,
    deciding: Sequence[str] | None = None,
    sides: Sequence[str] = RULED_OUT_SIDES,
) -> RuledOut | None:
    """The paper's effect ruled out by the deciding parts' intervals, or None: among the `deciding` parts (default:
    all) that have a paper value and whose interval excludes it on one of `sides`, the one whose interval lies
    farthest from it, in half widths of the interval.

    >>> parts = [Part("a - b", 0.003, (-0.012, 0.018), 0.0, "below"), Part("a - c", -0.17, (-0.23, -0.1), 0.0)]
    >>> found = rule_out(parts, {"a - b": -0.023, "a - c": -0.05}, deciding=["a - b"])
    >>> found.part, found.side
    ('a - b', 'short of')
    >>> rule_out(parts, {"a - b": -0.01}) is None
    True
    """
    best, distance = None, 0.0
    for part in parts:
        if (deciding is not None and part.name not in deciding) or part.name not in paper_values:
            continue
        value = float(paper_values[part.name])
        low, high = part.ci
        half = max((high - low) / 2, 1e-300)
        outside = max(low - value, value - high) / half
        if outside > 0 and outside > distance and _side(part, value) in sides:
            best, distance = (part, value), outside
    if best is None:
        return None
    part, value = best
    return RuledOut(part.name, value, part.estimate, part.ci, _side(part, value), part.units)


def _side(part: Part, value: float) -> str:
    """ "short of": the estimate lies between the paper's value and the null (the part's threshold), or past the
    null; "beyond": farther from the null than the paper's value, on its side."""
    if part.threshold is None:
        return "beyond"
    towards_null = abs(part.estimate - part.threshold) < abs(value - part.threshold)
    wrong_side = (part.estimate - part.threshold) * (value - part.threshold) < 0
    return "short of" if towards_null or wrong_side else "beyond"


@dataclass(frozen=True)
class SpecificationCheck:
    """One alternative specification of a claim (a setting the paper leaves open).

    `family_verdict` is the rule at Bonferroni level alpha / m over the m alternatives, which alone can contradict
    the primary verdict; `adequate`: decisive on its own, or its MDE (80% power) no larger than the claim's.
    `p_family` is the adjusted p of its test in the direction opposite to the primary verdict.
    """

    label: str
    n: int
    verdict: str
    family_verdict: str
    adequate: bool
    contradicts: bool = False
    estimate: float | None = None
    mde: float | None = None
    p_family: float | None = None

    def __post_init__(self) -> None:
        where = f"specification {self.label!r}"
        _check_fields(self, where, texts=("label",), optional=("estimate", "mde", "p_family"))
        _count(where, self.n)
        for name in ("verdict", "family_verdict"):
            if not is_verdict(getattr(self, name)):
                raise ClaimError(f"{where}: {name} {getattr(self, name)!r} is not one of {VERDICTS}")
        if self.contradicts and not self.adequate:
            raise ClaimError(f"{where}: only an adequately powered or decisive specification can contradict")


ROBUSTNESS_STATUSES = (
    "agrees",  # adequate specifications give the primary verdict, none contradicts it
    "not confirmed",  # a decisive primary verdict that no adequate specification repeats (none contradicts it)
    "contradicted",  # an adequate specification decides the opposite way, after control over the specifications
    "decisive elsewhere",  # an inconclusive primary verdict; some adequate specification decides (family level)
    "split",  # an inconclusive primary verdict; adequate specifications decide opposite ways (family level)
    "too small to tell",  # no specification is adequately powered or decisive
    "no specifications",
)


@dataclass(frozen=True)
class Robustness:
    """Whether a claim's primary verdict holds at the other specifications: beside the verdict, never instead.

    Only adequate specifications count. `false_contradiction` is the largest simulated P(contradicted) when every
    specification shares one effect, `reversal_power` the power to find `reversal`; each (p, Monte-Carlo SE).
    """

    primary: str
    specifications: tuple[SpecificationCheck, ...] = ()
    family: str = ""
    false_contradiction: tuple[float, float] | None = None
    reversal: str = ""
    reversal_power: tuple[float, float] | None = None
    reversal_smallest: str = ""  # the smallest reversal the curve finds with 80% power, in words

    def __post_init__(self) -> None:
        if not is_verdict(self.primary):
            raise ClaimError(f"robustness: primary verdict {self.primary!r} is not one of {VERDICTS}")
        if not all(isinstance(check, SpecificationCheck) for check in self.specifications):
            raise ClaimError("robustness: specifications must be actlab.claim.SpecificationCheck values")
        object.__setattr__(self, "specifications", tuple(self.specifications))
        for name in ("false_contradiction", "reversal_power"):
            value = getattr(self, name)
            if value is not None:
                if not (isinstance(value, Sequence) and len(value) == 2):
                    raise ClaimError(f"robustness: {name} must be (probability, Monte-Carlo SE), got {value!r}")
                object.__setattr__(self, name, tuple(_number("robustness", name, v) for v in value))

    @property
    def adequate(self) -> tuple[SpecificationCheck, ...]:
        return tuple(check for check in self.specifications if check.adequate)

    @property
    def agreeing(self) -> tuple[SpecificationCheck, ...]:
        return tuple(check for check in self.adequate if check.verdict == self.primary)

    @property
    def too_small(self) -> tuple[SpecificationCheck, ...]:
        return tuple(check for check in self.specifications if not check.adequate)

    @property
    def contradicting(self) -> tuple[SpecificationCheck, ...]:
        return tuple(check for check in self.specifications if check.contradicts)

    @property
    def status(self) -> str:
        """One of `ROBUSTNESS_STATUSES` (a closed set, for the claims table's column)."""
        if not self.specifications:
            return "no specifications"
        if self.contradicting:
            return "contradicted"
        if not self.adequate:
            return "too small to tell"
        if is_decisive(self.primary):
            return "agrees" if self.agreeing else "not confirmed"
        decided = {c.family_verdict for c in self.adequate if is_decisive(c.family_verdict)}
        if any(opposite(a, b) for a in decided for b in decided):
            return "split"
        return "decisive elsewhere" if decided else "agrees"

    @property
    def p(self) -> float | None:
        """The robustness test's p: the smallest family-adjusted p against the primary verdict over the adequate
        specifications (the contradicting one's when there is one)."""
        found = [check.p_family for check in (self.contradicting or self.adequate) if check.p_family is not None]
        return min(found) if found else None

    def line(self) -> str:
        """'agrees at 3 of 4 adequately powered specifications; n too small at 12; contradicted at tau 0.1'."""
        if not self.specifications:
            return "no other specifications were run"
        parts = [f"agrees at {len(self.agreeing)} of {len(self.adequate)} adequately powered specifications"]
        if self.too_small:
            sizes = sorted({check.n for check in self.too_small})
            size = f"n = {sizes[0]}" if len(sizes) == 1 else f"n = {sizes[0]}-{sizes[-1]}"
            parts.append(f"too small to tell at {len(self.too_small)} ({size})")
        if self.contradicting:
            where = "; ".join(f"{c.label} ({c.family_verdict})" for c in self.contradicting)
            parts.append(f"contradicted at {where}")
        elif not is_decisive(self.primary):
            decided = [c for c in self.adequate if is_decisive(c.family_verdict)]
            if decided:
                where = "; ".join(f"{c.label} ({c.family_verdict})" for c in decided)
                parts.append(f"decisive at {where}, after control over the specifications")
        return "; ".join(parts)


@dataclass(frozen=True)
class Scenario:
    """One simulated truth and how often the rule returned each verdict there.

    `errors`: the verdicts wrong at this truth (their total is the error rate); `target`: the verdict it should
    reach (its probability is the power); `contradicted`: P(robustness says "contradicted"), None without specs.
    """

    name: str
    effect: float
    probabilities: Mapping[str, float]
    n_simulations: int
    errors: tuple[str, ...] = ()
    target: str | None = None
    contradicted: float | None = None

    def probability(self, verdicts: Sequence[str] | str) -> float:
        """P(the rule returns any of `verdicts`) at this truth."""
        wanted = (verdicts,) if isinstance(verdicts, str) else tuple(verdicts)
        return sum(share for verdict, share in self.probabilities.items() if verdict in wanted)

    def standard_error(self, probability: float) -> float:
        """Monte-Carlo standard error of a probability estimated from this scenario's simulations."""
        return math.sqrt(max(probability * (1 - probability), 0.0) / self.n_simulations)

    @property
    def error_rate(self) -> float | None:
        return self.probability(self.errors) if self.errors else None

    @property
    def power(self) -> float | None:
        return self.probability(self.target) if self.target else None


@dataclass(frozen=True)
class OperatingCharacteristics:
    """How the claim's rule behaves at its own n and spread, by simulation (`actlab.stats.calibrate`);
    `unreachable` maps a verdict the rule cannot return at this n to why, and the n it would need."""

    design: str
    scenarios: tuple[Scenario, ...]
    seed: int
    unreachable: Mapping[str, str] = field(default_factory=dict)

    def scenario(self, name: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.name == name), None)

    @property
    def worst_null(self) -> Scenario | None:
        """The null scenario (one with error verdicts) where the rule errs most often."""
        nulls = [s for s in self.scenarios if s.errors]
        return max(nulls, key=lambda s: s.error_rate) if nulls else None

    @property
    def false_decisive_rate(self) -> tuple[float, float] | None:
        """The largest error rate over the null scenarios, with its Monte-Carlo SE."""
        worst = self.worst_null
        if worst is None:
            return None
        return worst.error_rate, worst.standard_error(worst.error_rate)

    def power_at(self, name: str) -> tuple[float, float] | None:
        """(power, Monte-Carlo SE) of scenario `name` ("mde", "paper"), or None if it was not simulated."""
        found = self.scenario(name)
        if found is None or found.power is None:
            return None
        return found.power, found.standard_error(found.power)


# How faithful a claim's test is to the paper (a closed set): the reader's first question after the verdict is
# "was this the paper's method?". `detail` says what was reduced, what changed and why, or what the reviewer asked.
FIDELITY_LEVELS = {
    "paper-scale": "the paper's method at the paper's scale",
    "reduced-scale": "the paper's method at reduced scale",
    "modified-method": "a modified method",
    "reviewer-test": "a reviewer's test",
}


@dataclass(frozen=True)
class Fidelity:
    """How faithful one claim's test is to the paper: a `FIDELITY_LEVELS` key and, in words, what differs."""

    level: str
    detail: str = ""
    sensitivity_of: str = ""  # the claim whose primary verdict this one re-tests by another method (never replaces)

    def __post_init__(self) -> None:
        if self.sensitivity_of and not CLAIM_ID.fullmatch(self.sensitivity_of):
            raise ClaimError(f"fidelity sensitivity_of {self.sensitivity_of!r} is not a claim id")
        if self.level not in FIDELITY_LEVELS:
            raise ClaimError(f"fidelity level {self.level!r} is not one of {tuple(FIDELITY_LEVELS)}")
        if not isinstance(self.detail, str) or len(self.detail) > MAX_TEXT:
            raise ClaimError(f"fidelity detail must be text of at most {MAX_TEXT} characters")
        if self.level in ("reduced-scale", "modified-method") and not self.detail.strip():
            raise ClaimError(f"fidelity {self.level!r} must say what was reduced or changed, and why (detail)")

    @property
    def label(self) -> str:
        """'the paper's method at reduced scale (2 epochs, 10k samples)': the level in words, with its detail."""
        words = FIDELITY_LEVELS[self.level]
        return f"{words} ({self.detail})" if self.detail else words


@dataclass(frozen=True)
class Claim:
    """One tested claim. Make it with `decide`; store it with `to_json`; read it with `from_json`."""

    claim_id: str
    study: str
    title: str
    statement: str
    source: str
    units: str
    n: int
    budget: str
    estimate: float
    ci: tuple[float, float]
    verdict: str
    rule: str  # the rule's source text
    rule_name: str
    inputs: Mapping[str, Any] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)
    confidence: float = 0.95
    mde: float | None = None
    equivalence_margin: float | None = None
    threshold: float | None = None
    supports: str | None = None  # "above" or "below": the side of `threshold` that supports the claim
    paper: str = ""
    paper_value: float | None = None
    kind: str = "experiment"  # one of KINDS: the paper's mathematics, its experiments, or a reviewer's test
    robustness: Robustness | None = None  # the verdict at the other specifications, beside the primary one
    operating: OperatingCharacteristics | None = None
    parts: tuple[Part, ...] = ()  # what the rule decides on, each drawn in the forest plot (none: the estimate)
    ruled_out: RuledOut | None = None  # the paper's own effect lies outside the deciding comparison's interval
    decided_by: str = ""  # what else decided the verdict when its parts alone do not show it (e.g. divergence)
    p_value: float | None = None  # the p of the test that decided the verdict (`deciding_test` names it)
    deciding_test: str = ""  # that test and the direction it points, in words
    p_adjusted: float | None = None  # adjusted within the study's family of claims (`adjust_family`)
    family: str = ""  # the family the adjustment ran over, in words
    survives_family: bool | None = None  # a decisive verdict whose adjusted p stays below alpha (None: not decisive)
    registry_hash: str = ""  # the registered definition this claim was decided by (`actlab.registry`)
    fixed_on: str = ""  # the date that definition was fixed (ISO), before or after the runs
    registration: str = ""  # "registered", or why not (not registered; another design than the registered one)
    post_hoc: bool = False  # the definition was fixed (or changed) after its runs were seen
    post_hoc_reason: str = ""
    margin_sensitivity: tuple[tuple[float, str], ...] = ()  # (margin, the verdict the rule gives at it)
    evidence_page: str = ""
    hardware: str = ""  # what a compute-time-matched verdict was measured on (`actlab.measured_on`): it holds there
    finding: str = ""  # one plain sentence, generated from the parts: what the data show against the paper
    fidelity: Fidelity | None = None  # how faithful the test is to the paper's own procedure
    digits: int = 3
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cid = self.claim_id
        if not isinstance(cid, str) or not CLAIM_ID.fullmatch(cid):
            raise ClaimError(f"claim_id {cid!r} must be 1-120 letters, digits, '_', '.', '-' (it names a file)")
        texts = ("study", "title", "statement", "source", "units", "budget", "rule", "rule_name", "paper", "family")
        texts += ("evidence_page", "decided_by", "deciding_test", "registry_hash", "fixed_on", "post_hoc_reason")
        texts += ("registration", "hardware", "finding")
        optional = ("mde", "equivalence_margin", "threshold", "paper_value", "p_value", "p_adjusted")
        _check_fields(self, cid, texts=texts, numbers=("estimate", "confidence"), optional=optional)
        object.__setattr__(self, "ci", _interval(cid, self.ci))
        if self.kind not in KINDS:
            raise ClaimError(f"claim {cid}: kind {self.kind!r} is not one of {KINDS}")
        if not isinstance(self.post_hoc, bool):
            raise ClaimError(f"claim {cid}: post_hoc must be true or false")
        if self.survives_family not in (None, True, False):
            raise ClaimError(f"claim {cid}: survives_family must be true, false or null")
        if self.robustness is not None and not isinstance(self.robustness, Robustness):
            raise ClaimError(f"claim {cid}: robustness must be an actlab.claim.Robustness value")
        if self.robustness is not None and self.robustness.primary != self.verdict:
            raise ClaimError(
                f"claim {cid}: its robustness was assessed for {self.robustness.primary!r}, "
                f"not for its verdict {self.verdict!r}"
            )
        object.__setattr__(self, "margin_sensitivity", _sensitivity(cid, self.margin_sensitivity))
        _count(f"claim {cid}", self.n)
        if not 0 < self.confidence < 1:
            raise ClaimError(f"claim {cid}: confidence must lie in (0, 1), got {self.confidence}")
        for name in ("p_value", "p_adjusted"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise ClaimError(f"claim {cid}: {name} must lie in [0, 1], got {value}")
        if self.supports not in (None, "above", "below"):
            raise ClaimError(f"claim {cid}: supports must be 'above', 'below' or None, got {self.supports!r}")
        if not is_verdict(self.verdict):
            raise ClaimError(f"claim {cid}: verdict {self.verdict!r} is not one of {VERDICTS}")
        if (
            self.verdict == "inconclusive"
            and self.mde is None
            and not any(getattr(p, "untestable", "") for p in self.parts)
        ):
            raise ClaimError(
                f"claim {cid}: an 'inconclusive' verdict must say what the run could have detected; give the "
                "evidence an mde (the minimum detectable effect in the claim's units, see actlab.stats.power), or mark "
                "the part that cannot move at this design `Part.untestable`"
            )
        if self.verdict == "equivalent" and self.equivalence_margin is None:
            raise ClaimError(f"claim {cid}: an 'equivalent' verdict needs its equivalence_margin (TOST's margin)")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= 12:
            raise ClaimError(f"claim {cid}: digits must be a whole number in 1..12, got {self.digits!r}")
        if self.fidelity is not None and not isinstance(self.fidelity, Fidelity):
            raise ClaimError(f"claim {cid}: fidelity must be an actlab.claim.Fidelity value")
        if self.ruled_out is not None and not isinstance(self.ruled_out, RuledOut):
            raise ClaimError(f"claim {cid}: ruled_out must be an actlab.claim.RuledOut value")
        if not all(isinstance(part, Part) for part in self.parts):
            raise ClaimError(f"claim {cid}: parts must be actlab.claim.Part values")
        object.__setattr__(self, "parts", tuple(self.parts))
        for name in ("inputs", "context", "provenance"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise ClaimError(f"claim {cid}: {name} must be a mapping, got {type(value).__name__}")
            object.__setattr__(self, name, plain(dict(value)))

    # ------------------------------------------------------------ what pages show
    @property
    def estimate_text(self) -> str:
        """'0.0123 bits/byte [0.0081, 0.017] (95% CI)', or '... (exact, no sampling interval)' for a deterministic
        check (operating characteristics with no scenario to simulate)."""
        if self.operating is not None and not self.operating.scenarios:
            unit = f" {self.units}" if self.units else ""
            return f"{self.estimate:.{self.digits}g}{unit} (exact, no sampling interval)"
        return format_estimate(self.estimate, self.ci, self.confidence, self.units, self.digits)

    @property
    def mde_text(self) -> str | None:
        if self.mde is None:
            return None
        return f"{self.mde:.{self.digits}g}{f' {self.units}' if self.units else ''}"

    # ------------------------------------------------------------ storage
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the claim file); the texts pages show are included for readers of the file."""
        data = asdict(self)
        data["ci"] = list(self.ci)
        data["parts"] = [{**part, "ci": list(part["ci"])} for part in data["parts"]]
        data["estimate_text"] = self.estimate_text
        data["mde_text"] = self.mde_text
        data["margin_sensitivity"] = [list(pair) for pair in self.margin_sensitivity]
        data["primary_verdict"] = self.verdict
        if self.ruled_out is not None:
            data["ruled_out"]["ci"] = list(self.ruled_out.ci)
            data["ruled_out"]["text"] = self.ruled_out.text(self.digits)
        if self.fidelity is not None:
            data["fidelity"]["label"] = self.fidelity.label
        data["p"] = self.p_value
        if self.robustness is not None:
            data["robustness"]["status"] = self.robustness.status
            data["robustness"]["line"] = self.robustness.line()
            data["robustness"]["p"] = self.robustness.p
        return data

    @classmethod
    def from_json(cls, data: Any) -> Claim:
        """The claim a `to_json` dict describes, validated; a `ClaimError` says what is wrong."""
        if not isinstance(data, Mapping):
            raise ClaimError(f"a claim must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        missing = [name for name in ("claim_id", "statement", "estimate", "ci", "verdict") if name not in data]
        if missing:
            raise ClaimError(f"claim {data.get('claim_id', '?')!r}: missing field(s) {', '.join(missing)}")
        values = {key: value for key, value in data.items() if key in known}
        try:
            if values.get("robustness") is not None:
                values["robustness"] = _robustness_from_json(values["robustness"])
            if values.get("operating") is not None:
                values["operating"] = _operating_from_json(values["operating"])
            values["parts"] = tuple(Part(**part) for part in values.get("parts") or ())
            if values.get("fidelity") is not None:
                values["fidelity"] = Fidelity(**{k: v for k, v in values["fidelity"].items() if k != "label"})
            if values.get("ruled_out") is not None:
                ruled = {key: value for key, value in values["ruled_out"].items() if key != "text"}  # text: derived
                values["ruled_out"] = RuledOut(**ruled)
            return cls(**values)
        except TypeError as error:  # a wrong or missing field inside a nested object, or in the claim itself
            raise ClaimError(f"claim {data.get('claim_id', '?')!r}: {error}") from error

    def with_changes(self, **changes: Any) -> Claim:
        """A copy with `changes` (validated again): e.g. operating characteristics or an adjusted p."""
        return replace(self, **changes)


def _robustness_from_json(data: Mapping[str, Any]) -> Robustness:
    derived = ("status", "line", "p")  # written for readers of the file, computed again from the rest
    checks = tuple(SpecificationCheck(**item) for item in data.get("specifications", ()))
    values = {key: value for key, value in data.items() if key not in (*derived, "specifications")}
    return Robustness(specifications=checks, **values)


def _sensitivity(claim_id: str, pairs: Any) -> tuple[tuple[float, str], ...]:
    """(margin, verdict) pairs, validated: every verdict one of `VERDICTS`, margins finite and increasing."""
    found = []
    for pair in pairs or ():
        if not (isinstance(pair, Sequence) and len(pair) == 2 and is_verdict(pair[1])):
            raise ClaimError(f"claim {claim_id}: margin_sensitivity holds (margin, verdict) pairs, got {pair!r}")
        found.append((_number(claim_id, "margin_sensitivity", pair[0]), pair[1]))
    if any(b[0] <= a[0] for a, b in zip(found, found[1:], strict=False)):
        raise ClaimError(f"claim {claim_id}: margin_sensitivity's margins must increase")
    return tuple(found)


def _operating_from_json(data: Mapping[str, Any]) -> OperatingCharacteristics:
    scenarios = tuple(
        Scenario(**{**item, "errors": tuple(item.get("errors", ())), "probabilities": dict(item["probabilities"])})
        for item in data.get("scenarios", ())
    )
    return OperatingCharacteristics(
        design=data["design"], scenarios=scenarios, seed=data["seed"], unreachable=dict(data.get("unreachable", {}))
    )


def format_estimate(
    estimate: float, ci: Sequence[float], confidence: float = 0.95, units: str = "", digits: int = 3
) -> str:
    """'0.0123 [0.0081, 0.017] (95% CI)': the estimate and its interval as pages show them."""
    unit = f" {units}" if units else ""
    return f"{estimate:.{digits}g}{unit} [{ci[0]:.{digits}g}, {ci[1]:.{digits}g}] ({confidence:.0%} CI)"


# ---------------------------------------------------------------- making a claim
REGISTERED_FIELDS = ("statement", "units", "threshold", "supports", "kind")  # with its id and study


class Registered(Protocol):
    """What `decide` reads of a claim's registered definition (`actlab.registry.Definition` is one). A protocol, not
    an import: the registry imports this module, and a type-only import back would draw the two as a circle."""

    claim_id: str
    study: str
    statement: str
    units: str
    threshold: float | None
    supports: str | None
    kind: str


def decide(
    claim: str | Registered,
    evidence: Evidence,
    rule: Callable[..., str],
    *,
    study: str = "",
    title: str = "",
    provenance: Mapping[str, Any] | None = None,
    **description: Any,
) -> Claim:
    """The claim `claim`, its verdict `rule(evidence.estimate, evidence.ci, **evidence.inputs)`; pure.

    `claim`: the claim's registered definition (`actlab.registry.Definition`), whose id, study, statement, units,
    threshold, supports and kind the claim takes, so each is written once (a description field overrides one only
    where the estimate is another quantity than the registered one, e.g. a divergence share); or a bare claim id.
    `description`: the claim's other `Claim` fields (`source` and `budget` are required; `statement` and `units`
    too without a definition).
    """
    if isinstance(claim, str):
        if not study:
            raise ClaimError(f"claim {claim}: give its study, or decide it from its registered Definition")
        claim_id = claim
    else:
        description = {**{name: getattr(claim, name) for name in REGISTERED_FIELDS}, **description}
        claim_id, study = claim.claim_id, study or claim.study
    verdict = apply_rule(claim_id, rule, evidence)
    return Claim(
        claim_id=claim_id,
        study=study,
        title=title or claim_id,
        n=int(evidence.n),
        estimate=evidence.estimate,
        ci=tuple(evidence.ci),
        verdict=verdict,
        rule=rule_source(rule),
        rule_name=getattr(rule, "__name__", type(rule).__name__),
        inputs=evidence.inputs,
        context=evidence.context,
        mde=evidence.mde,
        p_value=evidence.p_value,
        evidence_page=f"{study}.html" if study else "",
        provenance=provenance or {},
        **description,
    )


def apply_rule(claim_id: str, rule: Callable[..., str], evidence: Evidence) -> str:
    """The verdict `rule` returns for `evidence`; refuses a rule that ignores its arguments or returns a non-verdict."""
    if not callable(rule):
        raise ClaimError(f"claim {claim_id}: the rule must be a function rule(estimate, ci, **inputs) -> verdict")
    if not _uses_its_arguments(rule):
        raise ClaimError(f"claim {claim_id}: the rule never reads its arguments; it must compute the verdict")
    with _naming_the_claim(claim_id, getattr(rule, "__qualname__", repr(rule))):
        verdict = rule(evidence.estimate, tuple(evidence.ci), **dict(evidence.inputs))
    if not is_verdict(verdict):
        raise ClaimError(f"claim {claim_id}: the rule returned {verdict!r}; it must return one of {VERDICTS}")
    return verdict


@contextmanager
def _naming_the_claim(claim_id: str, rule_name: str) -> Iterator[None]:
    """Re-raise what the rule raises as a `RuleError` naming the claim, chained, so the page shows which failed."""
    try:
        yield
    except Exception as error:
        raise RuleError(
            f"claim {claim_id}: its rule {rule_name} raised {type(error).__name__}: {error} "
            "(the rule's traceback is above)"
        ) from error


def _uses_its_arguments(rule: Callable[..., Any]) -> bool:
    code = getattr(rule, "__code__", None)
    if code is None:  # a builtin or callable object: cannot inspect, trust it
        return True
    n_args = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    arguments = set(code.co_varnames[:n_args])
    loads = {ins.argval for ins in dis.get_instructions(code) if ins.opname.startswith("LOAD_FAST")}
    loaded = {name for value in loads for name in (value if isinstance(value, tuple) else (value,))}
    return bool(arguments & loaded) or bool(code.co_cellvars)


def rule_source(rule: Callable[..., Any]) -> str:
    """The rule's source text (shown beside its verdict), or its name where there is no source."""
    try:
        return textwrap.dedent(inspect.getsource(rule)).strip()
    except (OSError, TypeError):
        return getattr(rule, "__qualname__", repr(rule))
