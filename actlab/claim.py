"""A tested claim as one typed value: what was asked, what was measured, what the rule decided, how often it errs.

Why a frozen dataclass instead of a dict: a verdict is the product, and it is read in many places (a study page,
the index, `actlab calibrate`, the forest plot, a user's own script). Each used to re-check a dict's fields in
its own way. A `Claim` is validated once, when it is made, and `Claim.from_json(claim.to_json()) == claim`, so
the file the index reads is the same value a study computed.

A claim is computed, never typed: `decide` applies the claim's decision rule (a function in the study's
`claims.py`, `rule(estimate, ci, **inputs) -> verdict`) to the `Evidence` a study computed from its runs, and
stores the rule's source beside the verdict. `OperatingCharacteristics` (filled in by `actlab.stats.calibrate`)
say how often that rule returns each verdict at its own n and observed spread: its false decisive rate at the
null boundary and its power at the MDE and at the paper's effect.
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
from typing import Any

from actlab.io import _json_default

# What a decision rule may return. "equivalent" needs an equivalence margin (TOST); "not run" says the experiment
# did not produce what the claim needs (e.g. routers that never left uniform); "depends on <choice>" says that
# the specifications a paper leaves open give opposite decisive verdicts (or differ significantly).
VERDICTS = ("supported", "not supported", "inconclusive", "equivalent", "not run")
DECISIVE = ("supported", "not supported", "equivalent")
DEPENDS_ON = "depends on "
CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,119}")
MAX_TEXT = 20_000  # characters of any one text field: a claim is a summary, not a data dump


class ClaimError(ValueError):
    """A claim that cannot be made or read; the message names the claim and what is wrong."""


class RuleError(RuntimeError):
    """A claim's decision rule raised; the message names the claim, the cause keeps the rule's traceback."""


def is_verdict(verdict: Any) -> bool:
    """One of `VERDICTS`, or "depends on <choice>" naming the choice."""
    if not isinstance(verdict, str):
        return False
    return verdict in VERDICTS or (verdict.startswith(DEPENDS_ON) and bool(verdict[len(DEPENDS_ON) :].strip()))


def is_decisive(verdict: str) -> bool:
    """True for a verdict that asserts something about the claim ("supported", "not supported", "equivalent")."""
    return verdict in DECISIVE


def plain(value: Any) -> Any:
    """`value` as JSON would give it back: dicts, lists, str, int, float, bool, None; NaN and inf become None.

    Why: a rule input may be "not computed" (a TOST without a margin). JSON has no NaN, and the round trip
    through a claim file must give back an equal claim, so every input is stored in its JSON form from the start.
    """
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


def _text(claim_id: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ClaimError(f"claim {claim_id}: {name} must be text, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise ClaimError(f"claim {claim_id}: {name} is {len(value)} characters; at most {MAX_TEXT}")
    return value


@dataclass(frozen=True)
class Evidence:
    """What one claim's rule reads from one set of runs.

    `inputs` are the rule's keyword arguments; `context` is shown beside the verdict but not read by the rule;
    `p_value` is the two-sided p of the claim's primary test against its threshold (None when the claim has no
    single test), which the study family's multiplicity adjustment reads.
    """

    estimate: float
    ci: tuple[float, float]
    n: int
    inputs: Mapping[str, Any] = field(default_factory=dict)
    mde: float | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    p_value: float | None = None


@dataclass(frozen=True)
class Part:
    """One quantity a claim's rule decides on, as the forest plot draws it: its estimate and interval beside the
    threshold, with `supports` ("above" or "below") the side that supports the claim, and for an equivalence
    test its `margin` (the band threshold +- margin, the interval then being the one the TOST reads)."""

    name: str
    estimate: float
    ci: tuple[float, float]
    threshold: float | None = None
    supports: str | None = None
    units: str = ""
    margin: float | None = None

    def __post_init__(self) -> None:
        where = f"part {self.name!r}"
        _text(where, "name", self.name)
        _text(where, "units", self.units)
        object.__setattr__(self, "estimate", _number(where, "estimate", self.estimate))
        if not (isinstance(self.ci, Sequence) and len(self.ci) == 2):
            raise ClaimError(f"{where}: ci must be (low, high), got {self.ci!r}")
        low, high = (_number(where, "ci", bound) for bound in self.ci)
        if low > high:
            raise ClaimError(f"{where}: ci ({low}, {high}) has low > high")
        object.__setattr__(self, "ci", (low, high))
        for name in ("threshold", "margin"):
            object.__setattr__(self, name, _number(where, name, getattr(self, name), optional=True))
        if self.supports not in (None, "above", "below"):
            raise ClaimError(f"{where}: supports must be 'above', 'below' or None, got {self.supports!r}")
        if self.margin is not None and (self.margin <= 0 or self.threshold is None):
            raise ClaimError(f"{where}: an equivalence margin must be > 0 and have a threshold to centre on")


@dataclass(frozen=True)
class SpecificationOutcome:
    """A claim across the specifications a paper leaves open: the verdict holds in `stable` of `total`;
    `depends_on` names the choice(s) that give an opposite decisive verdict or a significant difference
    (None when the verdict does not depend on them); `heterogeneity_p` is the test across specifications."""

    stable: int
    total: int
    depends_on: str | None = None
    heterogeneity_p: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.stable, int) and isinstance(self.total, int) and 0 <= self.stable <= self.total):
            raise ClaimError(f"specifications must give 0 <= stable <= total, got {self.stable} of {self.total}")
        if self.total < 1:
            raise ClaimError("specifications must count at least one specification")
        if self.depends_on == "":
            object.__setattr__(self, "depends_on", None)


@dataclass(frozen=True)
class Scenario:
    """One simulated truth and how often the rule returned each verdict there.

    `errors` are the verdicts that are wrong at this truth (their total probability is the scenario's error
    rate, e.g. "supported" at the null boundary); `target` is the verdict the rule should reach (its probability
    is the power, e.g. "supported" at the MDE); either may be empty.
    """

    name: str
    effect: float
    probabilities: Mapping[str, float]
    n_simulations: int
    errors: tuple[str, ...] = ()
    target: str | None = None

    def probability(self, verdicts: Sequence[str] | str) -> float:
        """P(the rule returns any of `verdicts`) at this truth; "depends on" counts every "depends on <x>"."""
        wanted = (verdicts,) if isinstance(verdicts, str) else tuple(verdicts)
        total = 0.0
        for verdict, share in self.probabilities.items():
            group = "depends on" if verdict.startswith(DEPENDS_ON) else verdict
            if verdict in wanted or group in wanted:
                total += share
        return total

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
    """How the claim's rule behaves at its own n and spread, by simulation (`actlab.stats.calibrate`).

    `design` says what was simulated (n, pairing, the spread taken from the runs); `unreachable` maps a verdict
    the rule cannot return at this n to why, and the n it would need.
    """

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
    specifications: SpecificationOutcome | None = None
    operating: OperatingCharacteristics | None = None
    parts: tuple[Part, ...] = ()  # what the rule decides on, each drawn in the forest plot (none: the estimate)
    decided_by: str = ""  # what else decided the verdict when its parts alone do not show it (e.g. divergence)
    p_value: float | None = None
    p_adjusted: float | None = None  # Holm within the study's family of claims (`adjust_family`)
    family: str = ""  # the family the adjustment ran over, in words
    evidence_page: str = ""
    digits: int = 3
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cid = self.claim_id
        if not isinstance(cid, str) or not CLAIM_ID.fullmatch(cid):
            raise ClaimError(f"claim_id {cid!r} must be 1-120 letters, digits, '_', '.', '-' (it names a file)")
        for name in ("study", "title", "statement", "source", "units", "budget", "rule", "rule_name", "paper",
                     "family", "evidence_page", "decided_by"):  # fmt: skip
            _text(cid, name, getattr(self, name))
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 0:
            raise ClaimError(f"claim {cid}: n must be a whole number >= 0, got {self.n!r}")
        set_ = object.__setattr__
        set_(self, "estimate", _number(cid, "estimate", self.estimate))
        if not (isinstance(self.ci, Sequence) and len(self.ci) == 2):
            raise ClaimError(f"claim {cid}: ci must be (low, high), got {self.ci!r}")
        low, high = (_number(cid, "ci", bound) for bound in self.ci)
        if low > high:
            raise ClaimError(f"claim {cid}: ci ({low}, {high}) has low > high")
        set_(self, "ci", (low, high))
        confidence = _number(cid, "confidence", self.confidence)
        if not 0 < confidence < 1:
            raise ClaimError(f"claim {cid}: confidence must lie in (0, 1), got {confidence}")
        set_(self, "confidence", confidence)
        for name in ("mde", "equivalence_margin", "threshold", "paper_value", "p_value", "p_adjusted"):
            set_(self, name, _number(cid, name, getattr(self, name), optional=True))
        for name in ("p_value", "p_adjusted"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 1:
                raise ClaimError(f"claim {cid}: {name} must lie in [0, 1], got {value}")
        if self.supports not in (None, "above", "below"):
            raise ClaimError(f"claim {cid}: supports must be 'above', 'below' or None, got {self.supports!r}")
        if not is_verdict(self.verdict):
            raise ClaimError(f"claim {cid}: verdict {self.verdict!r} is not one of {VERDICTS} or '{DEPENDS_ON}<x>'")
        if self.verdict == "inconclusive" and self.mde is None:
            raise ClaimError(
                f"claim {cid}: an 'inconclusive' verdict must say what the run could have detected; give the "
                "evidence an mde (the minimum detectable effect in the claim's units, see actlab.stats.power)"
            )
        if self.verdict == "equivalent" and self.equivalence_margin is None:
            raise ClaimError(f"claim {cid}: an 'equivalent' verdict needs its equivalence_margin (TOST's margin)")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 1 <= self.digits <= 12:
            raise ClaimError(f"claim {cid}: digits must be a whole number in 1..12, got {self.digits!r}")
        if not all(isinstance(part, Part) for part in self.parts):
            raise ClaimError(f"claim {cid}: parts must be actlab.claim.Part values")
        set_(self, "parts", tuple(self.parts))
        for name in ("inputs", "context", "provenance"):
            value = getattr(self, name)
            if not isinstance(value, Mapping):
                raise ClaimError(f"claim {cid}: {name} must be a mapping, got {type(value).__name__}")
            set_(self, name, plain(dict(value)))

    # ------------------------------------------------------------ what pages show
    @property
    def estimate_text(self) -> str:
        """'0.0123 bits/byte [0.0081, 0.017] (95% CI)'; '1e-16 relative error (exact, no sampling interval)' for a
        deterministic check (operating characteristics with no scenario to simulate, e.g. `actlab.theory.claims`)."""
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
            if values.get("specifications") is not None:
                values["specifications"] = SpecificationOutcome(**values["specifications"])
            if values.get("operating") is not None:
                values["operating"] = _operating_from_json(values["operating"])
            values["parts"] = tuple(Part(**part) for part in values.get("parts") or ())
            return cls(**values)
        except TypeError as error:  # a wrong or missing field inside a nested object, or in the claim itself
            raise ClaimError(f"claim {data.get('claim_id', '?')!r}: {error}") from error

    def with_changes(self, **changes: Any) -> Claim:
        """A copy with `changes` (validated again): e.g. operating characteristics or an adjusted p."""
        return replace(self, **changes)


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
def decide(
    claim_id: str,
    evidence: Evidence,
    rule: Callable[..., str],
    *,
    study: str,
    statement: str,
    source: str,
    units: str,
    budget: str,
    title: str = "",
    paper: str = "",
    paper_value: float | None = None,
    threshold: float | None = None,
    supports: str | None = None,
    confidence: float = 0.95,
    equivalence_margin: float | None = None,
    specifications: SpecificationOutcome | None = None,
    parts: Sequence[Part] = (),
    decided_by: str = "",
    digits: int = 3,
    provenance: Mapping[str, Any] | None = None,
) -> Claim:
    """The claim `claim_id`: `rule(evidence.estimate, evidence.ci, **evidence.inputs)` decides the verdict.

    A pure function of its arguments (`provenance` is whatever the caller collected, e.g.
    `actlab.provenance.collect()`); the study page is `<study>.html`.
    """
    verdict = apply_rule(claim_id, rule, evidence)
    return Claim(
        claim_id=claim_id,
        study=study,
        title=title or claim_id,
        statement=statement,
        source=source,
        units=units,
        n=int(evidence.n),
        budget=budget,
        estimate=evidence.estimate,
        ci=tuple(evidence.ci),
        verdict=verdict,
        rule=rule_source(rule),
        rule_name=getattr(rule, "__name__", type(rule).__name__),
        inputs=evidence.inputs,
        context=evidence.context,
        confidence=confidence,
        mde=evidence.mde,
        equivalence_margin=equivalence_margin,
        threshold=threshold,
        supports=supports,
        paper=paper,
        paper_value=paper_value,
        specifications=specifications,
        parts=tuple(parts),
        decided_by=decided_by,
        p_value=evidence.p_value,
        evidence_page=f"{study}.html" if study else "",
        digits=digits,
        provenance=provenance or {},
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
        raise ClaimError(
            f"claim {claim_id}: the rule returned {verdict!r}; it must return one of {VERDICTS} or '{DEPENDS_ON}<x>'"
        )
    return verdict


@contextmanager
def _naming_the_claim(claim_id: str, rule_name: str) -> Iterator[None]:
    """Re-raise whatever the rule raises as a `RuleError` naming the claim, chained to the original, so the
    notebook (and the page rendered from it) shows which claim failed and where in its rule."""
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
