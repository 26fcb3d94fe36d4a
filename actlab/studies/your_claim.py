"""Your own claim through actlab's engine: a definition, a run function and a unit table in, a decided `Claim` out.

Why one module, and why no new machinery: a researcher checking a claim from a paper actlab does not ship should
write only what is theirs (what to run per seed, which number per unit the claim is about, and the claim's
definition), not a 1-4k line study package. A claim here is one quantity per unit (a seed, or a paired difference on
one seed) against a threshold: the comparison study's claim "beats every baseline" with one baseline, the threshold.
So the comparison's engine decides it: `compare.claims.beats_claim` (verdict, parts, MDE, simulated error rates,
the paper's value ruled out) and `compare.sequential` (each look of `actlab decide`, and the design's cost); this
module adds the runs (a plain loop over seeds: the sweep runner executes papermill notebooks, a user's run function
is a Python callable), the robustness over the user's alternative specifications (`actlab.stats.robustness`) and
the registry in a file of the user's, never `actlab/registry.json`. It lives with the studies (their layer:
`tests/test_import_layers.py`) because a user's claim is a study of one claim. See docs/your_claim.md.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from actlab import provenance, registry
from actlab.claim import Claim, Fidelity
from actlab.errors import UsageError
from actlab.stats import beats_every, sequential
from actlab.stats.beats_every import Comparisons, rule_beats_baselines
from actlab.stats.robustness import SpecificationResult, assess
from actlab.stats.sequential import Look
from actlab.studies.compare.claims import BeatsClaim, Settings, beats_claim
from actlab.studies.compare.sequential import look_at
from actlab.studies.compare.sequential import operating as compare_operating

Run = Callable[[int, Mapping[str, Any]], Mapping[str, float]]  # (seed, params) -> metrics
UnitTable = Callable[[pd.DataFrame], pd.DataFrame]  # runs (one row per seed) -> one row per unit
STUDY = "your-claims"  # the study a user's claim is filed under unless its definition names one


@dataclass(frozen=True)
class ClaimDefinition:
    """Everything that decides a user's claim except the runs: fixed (and best registered) before they are made.

    `column`: the unit table's column the claim reads; `threshold`/`supports`: the side of the threshold its mean
    must lie on; `margin`: TOST's band about the threshold ("equivalent"), None for none; `n`: seeds of the primary
    design; `params`: the run function's parameters at the primary specification; `specifications`: label ->
    parameter changes, the settings the paper leaves open (robustness, never the verdict)."""

    claim_id: str
    statement: str
    units: str
    threshold: float = 0.0
    supports: str = "above"
    margin: float | None = None
    alpha: float = 0.05
    n: int = 10
    paper_value: float | None = None
    paper: str = ""
    title: str = ""
    column: str = "effect"
    params: Mapping[str, Any] = field(default_factory=dict)
    specifications: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    study: str = STUDY
    fidelity: Fidelity | None = None

    def __post_init__(self) -> None:
        where = f"claim definition {self.claim_id!r}"
        if self.supports not in ("above", "below"):
            raise UsageError(f"{where}: supports must be 'above' or 'below', got {self.supports!r}")
        if not 0 < self.alpha < 0.5:
            raise UsageError(f"{where}: alpha must lie in (0, 0.5), got {self.alpha}")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 2:
            raise UsageError(f"{where}: n (seeds of the design) must be a whole number >= 2, got {self.n!r}")
        if self.margin is not None and not (math.isfinite(self.margin) and self.margin > 0):
            raise UsageError(f"{where}: margin must be a positive number (or None for no equivalence test)")
        for name in ("threshold", "paper_value"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and math.isfinite(value)):
                raise UsageError(f"{where}: {name} must be a finite number, got {value!r}")


def rule_threshold(
    estimate: float,
    ci: tuple[float, float],
    threshold: float,
    supports: str,
    alpha: float,
    equivalence_p: float | None = None,
    diverged: int = 0,
) -> str:
    """The shared `rule_beats_baselines` on the distance from `threshold`: its one comparator is the threshold."""
    distance = (ci[0] - threshold, ci[1] - threshold)
    return rule_beats_baselines(estimate - threshold, distance, supports, diverged, alpha, equivalence_p)


# ---------------------------------------------------------------- runs and units
def run_seeds(run: Run, seeds: Sequence[int], params: Mapping[str, Any]) -> pd.DataFrame:
    """One row per seed: the seed, `params` and the metrics `run(seed, params)` returned (finite numbers)."""
    rows = []
    for seed in seeds:
        metrics = run(int(seed), dict(params))
        if not isinstance(metrics, Mapping) or not metrics:
            raise UsageError(f"run(seed={seed}) returned {type(metrics).__name__}; it must return a dict of metrics")
        bad = {k: v for k, v in metrics.items() if not isinstance(v, int | float) or not math.isfinite(v)}
        if bad:
            raise UsageError(f"run(seed={seed}) returned non-finite or non-numeric metrics {bad}; fix or drop them")
        rows.append({"seed": int(seed), **dict(params), **{k: float(v) for k, v in metrics.items()}})
    return pd.DataFrame(rows)


def unit_values(definition: ClaimDefinition, unit_table: UnitTable, runs: pd.DataFrame) -> np.ndarray:
    """The claim's quantity per unit, (units,): `unit_table(runs)[definition.column]`, checked."""
    table = unit_table(runs)
    if not isinstance(table, pd.DataFrame) or definition.column not in table:
        columns = list(table.columns) if isinstance(table, pd.DataFrame) else type(table).__name__
        raise UsageError(
            f"{definition.claim_id}: unit_table(runs) must return a DataFrame with a column {definition.column!r} "
            f"(the definition's `column`), got {columns}"
        )
    values = table[definition.column].to_numpy(dtype=float)
    if values.size < 2 or not np.all(np.isfinite(values)) or np.ptp(values) == 0:
        raise UsageError(
            f"{definition.claim_id}: the unit table gives {values.size} unit(s) of {definition.column!r} "
            f"({values[:5].tolist()}...); a claim needs >= 2 finite values that vary (no interval otherwise)"
        )
    return values


def comparisons(definition: ClaimDefinition, values: np.ndarray) -> Comparisons:
    """The units as the comparison's engine reads them: one comparator (the threshold), each unit's distance from
    it oriented so that > 0 supports the claim, with the definition's margin."""
    sign = 1.0 if definition.supports == "above" else -1.0
    margins = None if definition.margin is None else (float(definition.margin),)
    distances = sign * (np.asarray(values, dtype=float) - definition.threshold)
    return Comparisons((definition.column,), distances[:, None], 0, distances.size, margins)


def evaluate(definition: ClaimDefinition, values: np.ndarray, alpha: float | None = None) -> Look:
    """The rule on `values` at level `alpha` (the definition's by default): the comparison's look
    (`compare.sequential.look_at`), on the claim's own scale."""
    level = definition.alpha if alpha is None else alpha
    look = look_at(comparisons(definition, values), len(values), level, definition.supports)
    t = definition.threshold
    return replace(look, estimate=t + look.estimate, ci=(t + look.ci[0], t + look.ci[1]))


# ---------------------------------------------------------------- the claim
def check(
    definition: ClaimDefinition,
    run: Run,
    unit_table: UnitTable,
    *,
    registry_path: str | Path | None = None,
    n_simulations: int = 1000,
    seed: int = 0,
) -> Claim:
    """Run seeds 0..n-1 at `definition.params`, decide the claim as the comparison decides one
    (`compare.claims.beats_claim`: verdict, parts, MDE, simulated error rates, the paper's value ruled out?), check
    it at every alternative specification, and stamp it from `registry_path` (a registry file of the user's:
    `register`); without one the claim is marked "not registered"."""
    runs = run_seeds(run, range(definition.n), definition.params)
    data = comparisons(definition, unit_values(definition, unit_table, runs))
    t, sign = definition.threshold, 1.0 if definition.supports == "above" else -1.0
    spec = BeatsClaim(
        definition=registry_definition(definition, run, unit_table),  # its id, study, statement, units, threshold
        source=definition.paper or "a user-defined claim (actlab.studies.your_claim)",
        title=definition.title or definition.claim_id,
        budget=f"{definition.n} seeds of {getattr(run, '__name__', 'run')}({dict(definition.params)})",
        candidate=definition.column,
        comparators=(f"{t:g}",),
        part_names=(definition.column,),
        paper=definition.paper,
        paper_effect=None if definition.paper_value is None else (sign * (definition.paper_value - t),),
        rule=rule_threshold,
    )
    alpha = definition.alpha
    how = {"n_simulations": n_simulations, "seed": seed, "provenance": _provenance(run, runs)}
    claim = beats_claim(data, spec, Settings(alpha=alpha, confidence=1 - alpha, **how))
    claim = claim.with_changes(
        deciding_test=f"one-sample t test of the mean {definition.column} against {t:g} (TOST +-margin for "
        "'equivalent')",
        fidelity=definition.fidelity,
    )
    claim = claim.with_changes(robustness=robustness(definition, run, unit_table, claim))
    return stamp(claim, definition, run, unit_table, registry_path)


def _provenance(run: Run, runs: pd.DataFrame) -> dict[str, Any]:
    """Versions, commit, the run function and every run's seed, parameters and metrics (no torch import)."""
    return {
        "versions": provenance.package_versions(),
        "git_commit": provenance.git_commit(),
        "run_function": f"{getattr(run, '__module__', '?')}.{getattr(run, '__qualname__', repr(run))}",
        "run_function_hash": registry.source_hash(run),
        "runs": runs.to_dict(orient="records"),
    }


def robustness(definition: ClaimDefinition, run: Run, unit_table: UnitTable, claim: Claim) -> Any:
    """The primary verdict at each alternative specification (`actlab.stats.robustness.assess`): each at the
    claim's alpha and at alpha / m (Bonferroni over the m alternatives), with its own MDE; None without any."""
    if not definition.specifications:
        return None
    alpha, m = definition.alpha, len(definition.specifications)
    results = []
    for label, changes in definition.specifications.items():
        runs = run_seeds(run, range(definition.n), {**definition.params, **changes})
        values = unit_values(definition, unit_table, runs)
        own, family = evaluate(definition, values), evaluate(definition, values, alpha / m)
        data = comparisons(definition, values)
        ps = beats_every.directional_ps(
            beats_every.statistics(data.values[None], confidence=1 - alpha, margins=data.margins, alpha=alpha)
        )
        against = {"supported": ps["not supported"], "not supported": ps["supported"]}
        p_against = against.get(claim.verdict, ps["supported"] if claim.verdict == "equivalent" else min(ps.values()))
        results.append(
            SpecificationResult(label, data.n, own.verdict, family.verdict, own.estimate, own.mde, p_against)
        )
    return assess(claim.verdict, claim.mde, results)


# ---------------------------------------------------------------- the registry (a file of the user's)
def registry_definition(definition: ClaimDefinition, run: Run, unit_table: UnitTable) -> registry.Definition:
    """The definition as `actlab.registry` hashes it: the rule, the run function and the unit table by source."""
    margin = "none" if definition.margin is None else f"TOST +-{definition.margin:g} {definition.units}"
    return registry.Definition(
        claim_id=definition.claim_id,
        study=definition.study,
        kind="experiment",
        statement=definition.statement,
        units=definition.units,
        threshold=definition.threshold,
        supports=definition.supports,
        margin=margin,
        margin_source="the user's definition (actlab.studies.your_claim)",
        alpha=definition.alpha,
        rules=(rule_threshold, run, unit_table),
        sweeps=(),
        extra={
            "n": definition.n,
            "column": definition.column,
            "paper_value": definition.paper_value,
            "params": dict(definition.params),
            "specifications": {k: dict(v) for k, v in definition.specifications.items()},
        },
    )


def register(definition: ClaimDefinition, run: Run, unit_table: UnitTable, path: str | Path) -> list[str]:
    """Fix the definition in the user's registry file `path` (created if absent; never `actlab/registry.json`),
    timed now, before the runs: a later change to it, its run function or unit table makes the claim post hoc."""
    if Path(path).resolve() == registry.REGISTRY_FILE.resolve():
        raise UsageError(f"{path} is actlab's own registry; register a user claim in a file of your own")
    return registry.update([registry_definition(definition, run, unit_table)], path=Path(path))


def stamp(claim: Claim, definition: ClaimDefinition, run: Run, unit_table: UnitTable, path: str | Path | None) -> Claim:
    """`claim` stamped from the user's registry file (`registry.stamp`), or marked not registered without one."""
    found = registry_definition(definition, run, unit_table)
    if path is None:
        why = "not registered (a user claim: `your_claim.register` fixes it in a registry file of your own)"
        return claim.with_changes(registry_hash=registry.entry_hash(found, {}), registration=why)
    document = registry.load_document(Path(path))
    return registry.stamp([claim], [found], profile=registry.ANY_PROFILE, registry=document)[0]


# ---------------------------------------------------------------- a user's file, and `actlab decide` on it
def load(path: str | Path) -> tuple[ClaimDefinition, Run, UnitTable]:
    """`DEFINITION`, `run` and `unit_table` from the user's Python file `path` (the convention docs/your_claim.md
    describes), checked."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"actlab_user_claim_{path.stem}", path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise UsageError(f"--claim-file {path}: no such Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = {"DEFINITION": ClaimDefinition, "run": Callable, "unit_table": Callable}
    missing = [name for name in names if not hasattr(module, name)]
    if missing or not isinstance(module.DEFINITION, ClaimDefinition):
        raise UsageError(
            f"{path} must define DEFINITION (an actlab.studies.your_claim.ClaimDefinition), run(seed, params) and "
            f"unit_table(runs); missing or wrong: {', '.join(missing) or 'DEFINITION'}"
        )
    return module.DEFINITION, module.run, module.unit_table


def sequential_design(definition: ClaimDefinition, first: int | None, batch: int | None, most: int | None) -> Any:
    """Looks at `first` seeds (default half the design's n), then every `batch` (default half n) up to `most`
    (default twice n), O'Brien-Fleming alpha spending at the definition's alpha (`actlab.stats.sequential`)."""
    half = max(2, definition.n // 2)
    first, batch, most = first or half, batch or half, most or 2 * definition.n
    if first < 2 or batch < 1 or most < first:
        raise UsageError(f"need --first >= 2, --batch >= 1 and --max-seeds >= --first; got {first}, {batch}, {most}")
    return sequential.SequentialDesign(tuple(sequential.flag_looks(first, batch, most)), alpha=definition.alpha)


def decide_sequentially(
    definition: ClaimDefinition,
    run: Run,
    unit_table: UnitTable,
    design: sequential.SequentialDesign,
    *,
    n_simulations: int = 1000,
    first_seed: int = sequential.FIRST_SEED,
) -> dict[str, Any]:
    """`actlab decide` for a user's claim: new seeds from `first_seed` (never the fixed design's 0..n-1), a look
    at each of the design's seed counts at its nominal level, the first decisive look decides (`sequential.stopped`);
    its error rates and expected seeds simulated at the observed spread by the comparison's sequential engine
    (`compare.sequential.operating`, beside the fixed design of the definition's n seeds). A record
    `page.sequential_block` shows."""
    runs = run_seeds(run, [], definition.params)
    looks: list[sequential.Look] = []
    for n, level in zip(design.looks, design.nominal_levels, strict=True):
        more = run_seeds(run, range(first_seed + len(runs), first_seed + n), definition.params)
        runs = pd.concat([runs, more], ignore_index=True)
        looks.append(evaluate(definition, unit_values(definition, unit_table, runs), level))
        verdict, why = sequential.stopped(looks, design)
        if verdict:
            break
    data = comparisons(definition, unit_values(definition, unit_table, runs))
    t, sign = definition.threshold, 1.0 if definition.supports == "above" else -1.0
    operating = compare_operating(data, design, n_simulations, fixed_seeds=definition.n)
    return {
        "claim_id": definition.claim_id,
        "study": definition.study,
        "design": design.as_json(),
        "design_text": design.describe(),
        "first_seed": first_seed,
        "seeds_reserved": [first_seed, first_seed + design.max_seeds - 1],
        "registered": False,
        "looks": [look.as_json() for look in looks],
        "verdict": verdict,
        "why": why,
        # the engine's truths are distances from the threshold: shown on the claim's scale
        "operating": [replace(s, effect=t + sign * s.effect).as_json() for s in operating],
    }


def decide_command(
    claim_id: str,
    path: str | Path,
    *,
    runs: Path,
    first: int | None = None,
    batch: int | None = None,
    max_seeds: int | None = None,
    n_simulations: int = 1000,
) -> Path:
    """`actlab decide CLAIM_ID --claim-file FILE`: the user's claim decided sequentially (`decide_sequentially`),
    its record written to `<runs>/<study>/decisions/<claim_id>.json` (a finished one is kept, never redone);
    returns `<runs>/<study>`, the folder `actlab.site.page.sequential_block` renders the decision from."""
    from actlab.io import atomic_write_json, read_json

    definition, run, unit_table = load(path)
    if definition.claim_id != claim_id:
        raise UsageError(f"{path} defines the claim {definition.claim_id!r}, not {claim_id!r}")
    folder = Path(runs) / definition.study
    record_path = folder / "decisions" / f"{claim_id}.json"
    if record_path.is_file():
        record = read_json(record_path)
        print(f"{claim_id} was decided already (delete {record_path} to decide again on the same new seeds)")
    else:
        design = sequential_design(definition, first, batch, max_seeds)
        print(f"{claim_id}: {design.describe()}", flush=True)
        record = decide_sequentially(definition, run, unit_table, design, n_simulations=n_simulations)
        atomic_write_json(record_path, record)
    print(f"{claim_id}: {record['verdict'] or 'not finished'}: {record['why']}; the decision is in {record_path}")
    return folder
