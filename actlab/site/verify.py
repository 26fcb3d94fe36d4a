"""Claims recomputed, not trusted: a published claim file is shown only if the code agrees with it.

Why: anyone who can write to `runs/claims` can edit a verdict ("supported" beside an interval that spans its
threshold) or forge a claim of a study that does not exist, with a "registered definition" it never had. The index
published what the files said. So, before the index lists a claim, `recheck` asks:
- does its study exist (a study that registers claims, or a page of the site), and is the claim, if registered,
  registered under that study;
- does the registry agree with what it says of its registration (hash, date, post-hoc mark);
- is its stored rule one of its study's rules as the code has it, and does that rule, applied again to the claim's
  stored estimate, interval and inputs, give its stored verdict?
A claim that fails any of these is an error row (`UnreadableClaim`) naming what does not match, never a verdict.
The rule comes from the code, never from the file: a claim file's rule text is data, and is never executed. So the
claim of a user's own study (a page of the site that registers no claims) whose rule is its notebook's own cannot be
recomputed: it is shown, unregistered, with `not_rechecked`'s line beside its verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from actlab.claim import Claim, ClaimError, Evidence, RuleError, apply_rule, rule_source
from actlab.registry import fixed_on_text
from actlab.site.inputs import UnreadableClaim

RECHECK_FAILED = "it does not match the code"  # how an error row of this module begins


@dataclass(frozen=True)
class Reference:
    """What claims are checked against: each study's registered claims (their rules), and the registry file's
    entries (None with `registry_problem` when it cannot be read). The command line makes it
    (`actlab.commands.published.reference`): the site imports no study."""

    definitions: Sequence[Any]  # actlab.registry.Definition values
    registry: Mapping[str, Any] | None
    registry_problem: str = ""
    page_studies: frozenset[str] = frozenset()  # studies with a page of the site, registered or not
    _rules: dict[str, dict[str, list[Callable[..., Any]]]] = field(default_factory=dict, repr=False)

    @property
    def studies(self) -> set[str]:
        return {definition.study for definition in self.definitions}

    def definition(self, claim_id: str) -> Any | None:
        return next((d for d in self.definitions if d.claim_id == claim_id), None)

    def rules(self, study: str | None, name: str) -> list[Callable[..., Any]]:
        """Every rule of `study`'s registered claims called `name` (one function may decide many claims); every
        study's for `study=None`."""
        if study is None:
            return [rule for other in sorted(self.studies) for rule in self.rules(other, name)]
        if not self._rules:
            for definition in self.definitions:
                named = self._rules.setdefault(definition.study, {})
                for rule in definition.rules:
                    found = named.setdefault(_name(rule), [])
                    if not any(rule is other or rule == other for other in found):
                        found.append(rule)
        return self._rules.get(study, {}).get(name, [])


def _name(rule: Callable[..., Any]) -> str:
    return getattr(rule, "__name__", type(rule).__name__)


def recheck(claim: Claim, ref: Reference) -> str | None:
    """Why `claim` cannot be shown as it is (module docstring), or None when the code agrees with it."""
    if claim.study not in ref.studies | ref.page_studies:
        known = ", ".join(sorted(ref.studies | ref.page_studies)) or "none"
        return f"its study {claim.study!r} does not exist (the studies here: {known})"
    definition = ref.definition(claim.claim_id)
    if definition is not None and definition.study != claim.study:
        return f"claim {claim.claim_id} is registered under study {definition.study!r}, not {claim.study!r}"
    problem = _registration_problem(claim, definition, ref)
    return problem if problem is not None else _rule_problem(claim, ref)


def _registration_problem(claim: Claim, definition: Any | None, ref: Reference) -> str | None:
    """A claim that says it is registered (or not post hoc) where the registry says otherwise."""
    says_registered = bool(claim.fixed_on) or claim.registration == "registered"
    if not says_registered and definition is None:
        return None
    if ref.registry is None:  # nothing to compare with: `caveats` says so beside the verdict
        return None
    entry = ref.registry.get(claim.claim_id)
    if not isinstance(entry, Mapping):
        if says_registered:
            return f"it says it is registered (fixed on {claim.fixed_on or '?'}), but the registry has no entry for it"
        return None
    if says_registered:
        hashes = {item.get("hash") for item in (entry.get("profiles") or {}).values() if isinstance(item, Mapping)} - {
            None
        }
        if claim.registry_hash not in hashes:
            return (
                f"its registered definition {claim.registry_hash or '(none)'} is not one the registry holds for it "
                f"({', '.join(sorted(map(str, hashes))) or 'none'})"
            )
        if claim.fixed_on != fixed_on_text(entry):
            return f"it says its definition was fixed on {claim.fixed_on}, the registry on {entry.get('fixed_on')}"
    if entry.get("post_hoc") and not claim.post_hoc:
        return "the registry marks its definition post hoc; the claim file does not"
    return None


def _code_rule(claim: Claim, ref: Reference) -> tuple[Callable[..., Any] | None, str | None]:
    """(the code's rule that decided `claim`, None), or (None, why there is none): taken by name and source from
    the claim's study's registered rules, or from any study's for a study that registers none."""
    own = claim.study in ref.studies
    named = ref.rules(claim.study if own else None, claim.rule_name)
    same = [rule for rule in named if rule_source(rule) == claim.rule]
    if same:
        return same[0], None
    if not named:
        return None, f"its rule {claim.rule_name!r} is not one of study {claim.study}'s registered rules"
    return None, (
        f"its stored rule {claim.rule_name!r} differs from study {claim.study}'s rule of that name in the code "
        "(a claim decided by other code, or an edited file: rebuild its page)"
    )


def _rule_problem(claim: Claim, ref: Reference) -> str | None:
    """The claim's rule, taken from the code by name and source, re-applied to its stored inputs."""
    rule, missing = _code_rule(claim, ref)
    if rule is None:
        return missing if claim.study in ref.studies else None  # a user's study: `not_rechecked` says so
    evidence = Evidence(estimate=claim.estimate, ci=claim.ci, n=claim.n, inputs=claim.inputs)
    try:
        verdict = apply_rule(claim.claim_id, rule, evidence)
    except (ClaimError, RuleError) as error:
        return f"its rule cannot be re-applied to its stored inputs: {error}"
    if verdict != claim.verdict:
        return (
            f"its stored verdict {claim.verdict!r} is not what its rule {claim.rule_name} gives on its stored "
            f"estimate, interval and inputs ({verdict!r})"
        )
    return None


def caveats(claim: Claim, ref: Reference) -> list[str]:
    """What `recheck` could not check of a claim it passed, to show beside its verdict: a rule that is its
    notebook's own (`not_rechecked`), a registration with no readable registry to compare with."""
    lines = [not_rechecked(claim, ref)]
    if ref.registry is None and (claim.fixed_on or claim.registration == "registered"):
        lines.append(f"registration not checked: {ref.registry_problem}")
    return [line for line in lines if line]


def not_rechecked(claim: Claim, ref: Reference) -> str:
    """The line beside the verdict of a claim `recheck` passed without re-applying its rule (its study registers
    no rules and its rule is its notebook's own), else ''."""
    if claim.study in ref.studies or _code_rule(claim, ref)[0] is not None:
        return ""
    return (
        f"not rechecked: study {claim.study} registers no claims, so its rule {claim.rule_name} is its notebook's "
        "and this verdict is as its page saved it"
    )


@dataclass(frozen=True)
class LeftOut:
    """A planned run that no claim could read: where it is (`<study>/<profile>/<sweep>/<run id>`), why, and the
    claims that read its sweep."""

    run: str
    why: str
    claims: tuple[str, ...] = ()


@dataclass
class Checked:
    """The index's claims after the checks: rows (claims and error rows), lines to show beside a claim's verdict
    (claim id -> lines), and the runs left out of their claims."""

    rows: list[Claim | UnreadableClaim]
    notes: dict[str, list[str]] = field(default_factory=dict)
    left_out: list[LeftOut] = field(default_factory=list)


def checked(claims: Iterable[Claim | UnreadableClaim], ref: Reference) -> list[Claim | UnreadableClaim]:
    """`claims` with each one `recheck` refuses replaced by an error row naming its file and the mismatch."""
    rows: list[Claim | UnreadableClaim] = []
    for claim in claims:
        problem = recheck(claim, ref) if isinstance(claim, Claim) else None
        if problem is None:
            rows.append(claim)
        else:
            rows.append(UnreadableClaim(claim.claim_id, f"{claim.claim_id}.json", f"{RECHECK_FAILED}: {problem}"))
    return rows
