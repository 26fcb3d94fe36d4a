"""What `notebooks/03_your_activation.ipynb` calls: from an idea (two base gradients, or your own module) to verdicts.

Why a module: each step of the tutorial is one call a user can also make from a script. `quick_comparison`'s
claims go to a folder of their own, never into the report's index, since the budget is a tutorial's.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from actlab import activation_specs as specs
from actlab.studies.compare import analysis, claims
from actlab.studies.compare.run import CompareRunConfig, train_arms


def prepare(pos: str, neg: str, name: str, activation: str, folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Your activation, ready to compare: {"spec", "derive", "checks", "build", "pos", "neg"}.

    - `activation` a saved derivation's name (`actlab derive ... --save NAME`): its base gradients are read from the
      file and derived again, like `pos`/`neg` below, so the comparison never depends on the file staying put;
    - `activation` any other spec ("package.module:Attr", a registry name): used as is, with no checks;
    - otherwise `pos`/`neg` are derived, checked (symbolically and numerically, as `actlab derive --check`) and
      saved as `name` into `<folder>/derivations`, never into your home folder.
    """
    from actlab.symbolic import saved as saved_derivations

    if activation and activation in saved_derivations.saved_names() and ":" not in activation:
        saved = saved_derivations.load_derivation(activation)
        pos, neg, name, activation = saved.positive, saved.negative, saved.name, ""
    if activation:
        build = specs.factory(activation, None, set())
        return {"spec": activation, "derive": {}, "checks": pd.DataFrame(), "build": build, "pos": "", "neg": ""}
    derive = {name: {"pos": pos, "neg": neg}}
    saved_now = specs.save_derived(derive, Path(folder) / "derivations")
    build = specs.factory(name, Path(folder) / "derivations", {name})
    checks = pd.DataFrame(saved_now[name]["checks"])
    return {"spec": name, "derive": derive, "checks": checks, "build": build, "pos": pos, "neg": neg}


def _values_and_slopes(build: Callable[[], nn.Module], x: torch.Tensor) -> pd.DataFrame:
    module = build().double()
    leaf = x.clone().requires_grad_(True)
    value = module(leaf)
    (slope,) = torch.autograd.grad(value.sum(), leaf)
    frames = [
        pd.DataFrame({"x": x.numpy(), "quantity": q, "value": y.detach().numpy()})
        for q, y in (("f(x)", value), ("f'(x)", slope))
    ]
    return pd.concat(frames, ignore_index=True)


def curves(build: Callable[[], nn.Module], x_min: float = -5.0, x_max: float = 3.0, points: int = 401) -> pd.DataFrame:
    """Long table (x, quantity in {f(x), f'(x)}, value): the module at its initial parameters, f' by autograd."""
    if not x_min < x_max or points < 2:
        raise ValueError(f"need x_min < x_max and points >= 2, got {x_min}, {x_max}, {points}")
    return _values_and_slopes(build, torch.linspace(x_min, x_max, points, dtype=torch.float64))


def zero_region(build: Callable[[], nn.Module], half_width: float = 3e-6, points: int = 201) -> pd.DataFrame:
    """The same on [-half_width, half_width], with x = 0 itself on the grid: where implementations clamp with an
    eps (`expm1(min(x, eps))`), a jump or a wrong slope at 0 shows up here."""
    if half_width <= 0 or points < 3:
        raise ValueError(f"need half_width > 0 and points >= 3, got {half_width}, {points}")
    left = torch.linspace(-half_width, 0.0, points // 2 + 1, dtype=torch.float64)
    return _values_and_slopes(build, torch.cat([left, -left.flip(0)[1:]]))


def zero_summary(build: Callable[[], nn.Module]) -> dict[str, float]:
    """f(0), the jump at 0 (f(t) - f(0) - t f'(t) for the smallest positive float t: 0 when f is continuous), and
    autograd f' just left of, at and just right of 0 (float64)."""
    module = build().double()
    tiny = torch.finfo(torch.float64).tiny
    x = torch.tensor([-1e-9, 0.0, tiny, 1e-9], dtype=torch.float64, requires_grad=True)
    value = module(x)
    (slope,) = torch.autograd.grad(value.sum(), x)
    value = value.detach()
    jump = float(value[2] - value[1] - tiny * slope[2])
    return {
        "f(0)": float(value[1]),
        "jump at 0": jump,
        "f'(0-)": float(slope[0]),
        "f'(0)": float(slope[1]),
        "f'(0+)": float(slope[3]),
    }


def quick_comparison(
    prepared: dict[str, Any],
    baselines: list[str],
    *,
    task: str,
    seeds: int,
    steps: int,
    compute_steps: int,
    rounds: int,
    folder: str | os.PathLike[str],
    margin: float | None = None,
    alpha: float = 0.05,
    confidence: float = 0.95,
    fast_path: str = "auto",
    n_simulations: int = 400,
) -> dict[str, Any]:
    """Your activation against `baselines` on `task` for `seeds` seeds, step- and compute-time-matched, in this process.

    The same code as the study's runs (`run.train_arms`; compute time anchored on the first baseline), analysis and
    claims (`claims.decide_all`, `n_simulations` per scenario), the claims saved into `<folder>/claims`. Returns the
    arms, metric, paired-improvement and throughput tables, the claims and the comparisons that could not be tested.
    """
    from actlab import provenance
    from actlab.record import save_claims

    spec = prepared["spec"]
    runs = {}
    for seed in range(seeds):
        arms = (spec, *baselines)
        config = CompareRunConfig(
            task=task,
            activations=arms,
            derive=prepared["derive"],
            steps=steps,
            compute_steps=compute_steps,
            reference=baselines[0],
            seed=seed,
            rounds=rounds,
            fast_path=fast_path,
            threads=1,
        )
        results = train_arms(config, Path(folder) / f"seed{seed}")
        runs[f"seed{seed}"] = {"params": {"seed": seed}, "status": "ok", "results": results}
    frame = analysis.arms_frame(runs)
    margins = {task: margin} if margin is not None and math.isfinite(margin) and margin > 0 else {}
    paired = analysis.paired_improvements(frame, [spec], baselines, alpha=alpha, confidence=confidence, margins=margins)
    setup = analysis.setup_summary(runs)
    settings = claims.Settings(
        baselines=tuple(baselines),
        candidates=(spec,),
        margins=margins,
        alpha=alpha,
        confidence=confidence,
        n_simulations=n_simulations,
        provenance=provenance.collect(),
    )
    decided = claims.decide_all(claims.StudyRuns(frame, setup), settings)
    save_claims(decided.claims, Path(folder) / "claims")
    return {
        "arms": frame,
        "table": analysis.metric_table(frame, confidence, order=[spec, *baselines]),
        "paired": paired,
        "throughput": analysis.throughput_table(frame, baselines[0], confidence),
        "claims": decided.claims,
        "untested": decided.untested,
        "setup": setup,
    }
