"""What a notebook hands back: its results (`record`) and the claims it tested (`record_claim`).

Why one call each: a sweep run is only useful if its numbers land in one known file that survives
a crash, and a report is only honest if every verdict is computed by a rule written in code.

Where `record(...)` writes `results.json`, first match wins:
1. the current directory, if it holds the `.actlab-run` marker: `actlab.sweep` executes every run
   with its run folder as the kernel's working directory and puts the marker there;
2. `$ACTLAB_RUN_DIR`, if set;
3. otherwise (a notebook run by hand) `runs/interactive/` under the project root, the nearest folder
   above the working directory holding `pyproject.toml` or `.git` (else the working directory).

`record_claim(...)` writes `<claims dir>/<claim_id>.json`: the `claims_dir` argument, else
`$ACTLAB_CLAIMS_DIR` (set by `actlab report` to `runs/claims`), else `runs/claims/` under the project root.
"""

from __future__ import annotations

import ast
import dis
import inspect
import json
import math
import os
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from actlab.io import _json_default, atomic_write_json, read_json

RUN_MARKER = ".actlab-run"
RESULTS_FILE = "results.json"
RUN_STATUSES = ("ok", "diverged")  # what a notebook may record; "failed" is the runner's verdict
# What a decision rule may return. "equivalent" needs an equivalence margin (TOST); "not run" says the
# experiment did not produce what the claim needs (e.g. routers that never left uniform); a verdict that flips
# across the specifications a paper leaves open reads "depends on <choice>".
VERDICTS = ("supported", "not supported", "inconclusive", "equivalent", "not run")
DEPENDS_ON = "depends on "
CLAIM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: cwd) with `pyproject.toml` or `.git`."""
    start = (start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return start


def current_run_dir() -> Path:
    """The folder `record` writes to (see the module docstring for the order)."""
    cwd = Path.cwd()
    if (cwd / RUN_MARKER).is_file():
        return cwd
    if os.environ.get("ACTLAB_RUN_DIR"):
        return Path(os.environ["ACTLAB_RUN_DIR"])
    return project_root() / "runs" / "interactive"


def record(**values: Any) -> Path:
    """Merge `values` into this run's `results.json` (atomically) and return the file's path.

    Call it as often as you like; later values for the same key win, so a loop can record as it
    goes and a crash keeps everything recorded so far. Numbers become rows of the sweep's tidy
    `results.csv`; lists and dicts are kept in `results.json`. A matplotlib figure is saved as
    `<key>.png` next to it and recorded by file name. `status="diverged"` marks a run whose
    training blew up (a result, not a crash); `status="ok"` is the default.
    """
    run_dir = current_run_dir()
    path = run_dir / RESULTS_FILE
    status = values.pop("status", None)
    if status is not None and status not in RUN_STATUSES:
        raise ValueError(f"actlab.record: status must be one of {', '.join(RUN_STATUSES)}, got {status!r}")
    stored: dict[str, Any] = read_json(path) if path.is_file() else {}
    for key, value in values.items():
        stored[key] = _storable(key, value, run_dir)
    if status is not None:
        stored["status"] = status
    return atomic_write_json(path, stored)


def _storable(key: str, value: Any, run_dir: Path) -> Any:
    """A JSON-ready version of `value`; figures are saved as PNG artifacts, paths made relative."""
    if hasattr(value, "savefig"):  # a matplotlib Figure: keep the picture, store its file name
        artifact = run_dir / f"{key}.png"
        run_dir.mkdir(parents=True, exist_ok=True)
        value.savefig(artifact, dpi=100, bbox_inches="tight")
        return artifact.name
    if isinstance(value, os.PathLike):
        value = Path(value)
        try:
            return str(value.resolve().relative_to(run_dir.resolve()))
        except ValueError:
            return str(value)
    try:
        return json.loads(json.dumps(value, default=_json_default))
    except TypeError as error:
        raise ValueError(
            f"actlab.record: cannot store {key}={type(value).__name__}; record numbers, strings, lists, dicts, "
            f"arrays, paths or figures"
        ) from error


def read_results(run_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """A run's recorded results (empty if it recorded nothing)."""
    path = Path(run_dir) / RESULTS_FILE
    return read_json(path) if path.is_file() else {}


def record_claim(
    claim_id: str,
    statement: str,
    *,
    source: str,
    n: int,
    budget: str,
    estimate: float,
    ci: Sequence[float],
    rule: Callable[..., str] | str,
    inputs: dict[str, Any] | None = None,
    confidence: float = 0.95,
    units: str = "",
    digits: int = 3,
    paper: str = "",
    evidence: str | None = None,
    claims_dir: str | os.PathLike[str] | None = None,
    mde: float | None = None,
    equivalence_margin: float | None = None,
    specifications: Mapping[str, Any] | None = None,
    title: str = "",
    threshold: float | None = None,
    paper_value: float | None = None,
) -> dict[str, Any]:
    """Record one tested claim; its verdict is whatever `rule` returns, never typed by hand.

    `rule` is a function `rule(estimate, ci, **inputs) -> verdict` (a study's `claims.py` holds them; its
    source is stored and shown in the report), or a Python expression over `estimate`, `ci_low`,
    `ci_high` and `inputs`. It must use its inputs: a rule that returns a constant is refused.
    The verdict must be one of `VERDICTS` or "depends on <choice>".

    Why the extra fields: a verdict must say what it means. `mde` is the minimum detectable effect at 80%
    power in the claim's units (`actlab.stats.power`); an "inconclusive" verdict without it is refused.
    `equivalence_margin` is the +-m of a TOST; "equivalent" needs it. `specifications` says how the verdict
    depends on the choices a paper leaves open: `{"stable": x, "total": y, "depends_on": "lr" or None}`, i.e.
    the verdict holds in x of y specifications.

    For the index's forest plot: `title` is the claim's short name (the statement stays the full text);
    `threshold` is the decision threshold the rule compares the estimate with, and `paper_value` the paper's
    own figure, both on the estimate's scale (leave them None where the claim has none).
    """
    if not CLAIM_ID.match(claim_id):
        raise ValueError(f"record_claim: claim_id {claim_id!r} must be letters, digits, '_', '.', '-' (a file name)")
    low, high = (float(bound) for bound in ci)
    estimate = float(estimate)
    _require_finite(claim_id, estimate=estimate, ci_low=low, ci_high=high)
    if low > high:
        raise ValueError(f"record_claim {claim_id}: CI ({low}, {high}) has low > high")
    inputs = dict(inputs or {})
    verdict, rule_text = _apply_rule(claim_id, rule, estimate, (low, high), inputs)
    if mde is not None:
        mde = float(mde)
        _require_finite(claim_id, mde=mde)
    if verdict == "inconclusive" and mde is None:
        raise ValueError(
            f"record_claim {claim_id}: an 'inconclusive' verdict must say what the run could have detected; "
            "pass mde= (the minimum detectable effect in the claim's units, see actlab.stats.power)"
        )
    if equivalence_margin is not None:
        equivalence_margin = float(equivalence_margin)
        _require_finite(claim_id, equivalence_margin=equivalence_margin)
    if verdict == "equivalent" and equivalence_margin is None:
        raise ValueError(f"record_claim {claim_id}: an 'equivalent' verdict needs equivalence_margin= (TOST's margin)")
    specs = _specifications(claim_id, specifications)
    threshold = None if threshold is None else float(threshold)
    paper_value = None if paper_value is None else float(paper_value)
    _require_finite(
        claim_id, **{k: v for k, v in (("threshold", threshold), ("paper_value", paper_value)) if v is not None}
    )
    claim = {
        "claim_id": claim_id,
        "title": title or claim_id,
        "statement": statement,
        "source": source,
        "what_was_run": {"n": n, "budget": budget},
        "estimate": estimate,
        "ci": [low, high],
        "confidence": confidence,
        "units": units,
        "estimate_text": format_estimate(estimate, (low, high), confidence, units, digits),
        "mde": mde,
        "mde_text": None if mde is None else f"{mde:.{digits}g}{f' {units}' if units else ''}",
        "equivalence_margin": equivalence_margin,
        "specifications": specs,
        "inputs": _finite_or_null(json.loads(json.dumps(inputs, default=_json_default))),
        "rule": rule_text,
        "verdict": verdict,
        "paper": paper,
        "threshold": threshold,
        "paper_value": paper_value,
        "evidence": evidence if evidence is not None else os.environ.get("ACTLAB_EVIDENCE", ""),
        "study": os.environ.get("ACTLAB_STUDY", ""),
    }
    from actlab import provenance  # imports torch for the device name: only when a claim is recorded

    claim["provenance"] = provenance.collect()
    atomic_write_json(claims_folder(claims_dir) / f"{claim_id}.json", claim)
    return claim


def _finite_or_null(value: Any) -> Any:
    """`value` with every NaN or infinity replaced by None (JSON null).

    Why: a rule input may be "not computed" (a TOST without a margin); JSON has no NaN, and the index refuses
    a claim file that holds one, so it would hide the whole claim instead of one missing input.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite_or_null(item) for item in value]
    return value


def _require_finite(claim_id: str, **values: float) -> None:
    for name, value in values.items():
        if not math.isfinite(value):
            raise ValueError(
                f"record_claim {claim_id}: {name} is {value}; a claim needs finite numbers "
                "(a NaN usually means a diverged run or too few seeds: drop or fix it before recording)"
            )


def _specifications(claim_id: str, specs: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate `{"stable": x, "total": y, "depends_on": name or None}`; None when the claim has no curve."""
    if specs is None:
        return None
    stable, total = int(specs.get("stable", -1)), int(specs.get("total", -1))
    if not 0 <= stable <= total or total < 1:
        raise ValueError(
            f"record_claim {claim_id}: specifications must give 0 <= stable <= total, total >= 1; got {dict(specs)}"
        )
    depends_on = specs.get("depends_on")
    return {"stable": stable, "total": total, "depends_on": None if depends_on in (None, "") else str(depends_on)}


def is_verdict(verdict: Any) -> bool:
    """One of `VERDICTS`, or "depends on <choice>" naming the choice that flips it."""
    if not isinstance(verdict, str):
        return False
    return verdict in VERDICTS or (verdict.startswith(DEPENDS_ON) and bool(verdict[len(DEPENDS_ON) :].strip()))


def claims_folder(claims_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where claims go: the argument, else `$ACTLAB_CLAIMS_DIR`, else `runs/claims` under the project root."""
    if claims_dir is not None:
        return Path(claims_dir)
    if os.environ.get("ACTLAB_CLAIMS_DIR"):
        return Path(os.environ["ACTLAB_CLAIMS_DIR"])
    return project_root() / "runs" / "claims"


def format_estimate(
    estimate: float, ci: Sequence[float], confidence: float = 0.95, units: str = "", digits: int = 3
) -> str:
    """'0.0123 [0.0081, 0.017] (95% CI)': the estimate and its interval as the index shows them."""
    unit = f" {units}" if units else ""
    return f"{estimate:.{digits}g}{unit} [{ci[0]:.{digits}g}, {ci[1]:.{digits}g}] ({confidence:.0%} CI)"


def _apply_rule(
    claim_id: str, rule: Callable[..., str] | str, estimate: float, ci: tuple[float, float], inputs: dict[str, Any]
) -> tuple[str, str]:
    """Run the decision rule; return (verdict, the rule's source text)."""
    if isinstance(rule, str):
        tree = ast.parse(rule, mode="eval")
        if not any(isinstance(node, ast.Name) for node in ast.walk(tree)):
            raise ValueError(f"record_claim {claim_id}: the rule {rule!r} is a constant; it must compute the verdict")
        names = {"estimate": estimate, "ci_low": ci[0], "ci_high": ci[1], "ci": ci, "abs": abs, "math": math, **inputs}
        code = compile(tree, f"<rule {claim_id}>", "eval")
        with _naming_the_claim(claim_id, rule):
            verdict = eval(code, {"__builtins__": {}}, names)  # noqa: S307
        text = rule
    elif callable(rule):
        if not _uses_its_arguments(rule):
            raise ValueError(
                f"record_claim {claim_id}: the rule never reads its arguments; it must compute the verdict"
            )
        with _naming_the_claim(claim_id, getattr(rule, "__qualname__", repr(rule))):
            verdict = rule(estimate, ci, **inputs)
        text = _source_of(rule)
    else:
        raise ValueError(f"record_claim {claim_id}: rule must be a function or an expression string")
    if not is_verdict(verdict):
        raise ValueError(
            f"record_claim {claim_id}: the rule returned {verdict!r}; it must return one of {VERDICTS} "
            f"or '{DEPENDS_ON}<choice>'"
        )
    return verdict, text


class RuleError(RuntimeError):
    """A claim's decision rule raised; the message names the claim, the cause keeps the rule's traceback."""


@contextmanager
def _naming_the_claim(claim_id: str, rule_name: str) -> Iterator[None]:
    """Re-raise whatever the rule raises as a `RuleError` naming the claim, chained to the original, so the
    notebook (and the study page rendered from it) shows which claim failed and where in its rule."""
    try:
        yield
    except Exception as error:
        raise RuleError(
            f"record_claim {claim_id}: its rule {rule_name} raised {type(error).__name__}: {error} "
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


def _source_of(rule: Callable[..., Any]) -> str:
    try:
        return textwrap.dedent(inspect.getsource(rule)).strip()
    except (OSError, TypeError):  # defined somewhere without source (e.g. exec); say what it is
        return getattr(rule, "__qualname__", repr(rule))
