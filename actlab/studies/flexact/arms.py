"""The configurations ("arms") a Flex-Act run trains: ground truth x input scale x model variant.

Why one expansion function: every sweep of the study is a cross product of the same few axes, and the axes
interact (lambda and g_bar mean nothing at alpha = 0; Table 6's clipping and normalisation rows have no KL term).
`expand` applies those rules once, so a run never trains the same network twice under two names.

Table 6's strategies (App. D.8) are switches of the router. `output_norm_batch` is not a row of the paper: it
reads eq. 19's ||a_k|| over the whole batch, because the paper's Table 6 value suggests it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from actlab.activations import get_spec

FLEXACT = "flexact"
TAU = "tau"  # lambda coupled to the routing temperature, as App. B writes p_tilde ∝ exp(-g_bar / tau)
G_BAR_DEFINITIONS = ("mean", "l2")  # batch mean of per-sample ||sigma'(h_b)||_2 | ||sigma'(h)||_2 over the batch


@dataclass(frozen=True)
class Strategy:
    """One row of Table 6: which router switches it turns on."""

    name: str
    label: str  # the row label as the paper prints it
    uses_kl: bool
    logit_clip: bool = False
    norm_clip: bool = False
    normalize_outputs: str | None = None  # None | "sample" | "batch": the norm a_k is divided by


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("no_correction", "No correction (baseline)", uses_kl=False),
        Strategy("logit_clip", "Logit grad clipping", uses_kl=False, logit_clip=True),
        Strategy("kl_clipped_norms", "KL + clipped norms", uses_kl=True, norm_clip=True),
        Strategy("output_norm", "Output normalisation", uses_kl=False, normalize_outputs="sample"),
        Strategy(
            "output_norm_batch", "Output normalisation, norm over the batch", uses_kl=False, normalize_outputs="batch"
        ),
        Strategy("kl_grad_norm", "KL + Grad Norm (ours)", uses_kl=True),
    )
}
FIXED = "fixed"  # the strategy field of a fixed-activation network


@dataclass(frozen=True)
class Arm:
    """One network to train. `model`: "flexact" or a fixed activation's registry name; without a KL term, `alpha`
    is 0 and `lam` / `g_bar` are None."""

    ground_truth: str
    k: float
    model: str
    strategy: str
    alpha: float
    lam: float | str | None
    g_bar: str | None

    def as_row(self) -> dict[str, Any]:
        """The arm's fields plus `lam_label` (a string, so 'tau' and numbers share a column)."""
        row = asdict(self)
        row["lam_label"] = "-" if self.lam is None else str(self.lam)
        row["g_bar"] = self.g_bar or "-"
        return row


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _check_lam(lam: Any) -> float | str:
    if lam == TAU:
        return TAU
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not lam > 0:
        raise ValueError(f"lambda must be a number > 0 or {TAU!r} (coupled to the routing temperature), got {lam!r}")
    return float(lam)


def expand(
    ground_truth: str | Sequence[str],
    k: float | Sequence[float],
    model: str | Sequence[str],
    strategy: str | Sequence[str] = "kl_grad_norm",
    alpha: float | Sequence[float] = 0.3,
    lam: float | str | Sequence[float | str] = TAU,
    g_bar: str | Sequence[str] = "mean",
) -> list[Arm]:
    """Every distinct arm of the cross product, in a stable order (each argument a value or a list): fixed models
    ignore the routing axes, a strategy without KL ignores alpha, lambda and g_bar, KL at alpha = 0 is
    `no_correction`."""
    gts = [get_spec(name).name for name in _as_list(ground_truth)]
    models = _as_list(model)
    for name in models:
        if name != FLEXACT:
            get_spec(name)  # unknown names fail with the list of valid ones
    strategies = _as_list(strategy)
    for name in strategies:
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    alphas = [float(a) for a in _as_list(alpha)]
    if any(not a >= 0 for a in alphas):
        raise ValueError(f"alpha must be >= 0, got {alphas}")
    lams = [_check_lam(value) for value in _as_list(lam)]
    g_bars = _as_list(g_bar)
    for name in g_bars:
        if name not in G_BAR_DEFINITIONS:
            raise ValueError(f"g_bar must be one of {G_BAR_DEFINITIONS}, got {name!r}")
    ks = [float(value) for value in _as_list(k)]
    if any(not value > 0 for value in ks):
        raise ValueError(f"input scale k must be > 0, got {ks}")
    arms: list[Arm] = []
    for gt in gts:
        for scale in ks:
            arms.extend(_model_arms(gt, scale, models, strategies, alphas, lams, g_bars))
    return list(dict.fromkeys(arms))


def _model_arms(
    gt: str,
    k: float,
    models: Iterable[str],
    strategies: list[str],
    alphas: list[float],
    lams: list[float | str],
    g_bars: list[str],
) -> list[Arm]:
    arms = []
    for model in models:
        if model != FLEXACT:
            arms.append(Arm(gt, k, model, FIXED, 0.0, None, None))
            continue
        for name in strategies:
            if not STRATEGIES[name].uses_kl:
                arms.append(Arm(gt, k, FLEXACT, name, 0.0, None, None))
                continue
            for a in alphas:
                if a == 0.0:
                    arms.append(Arm(gt, k, FLEXACT, "no_correction", 0.0, None, None))
                    continue
                arms.extend(Arm(gt, k, FLEXACT, name, a, lam, g) for lam in lams for g in g_bars)
    return arms


AXES = ("ground_truth", "k", "model", "strategy", "alpha", "lam", "g_bar")  # the arguments of `expand`


def expand_sets(base: Mapping[str, Any], sets: Sequence[Mapping[str, Any]]) -> list[Arm]:
    """The union, in order and without duplicates, of one `expand` grid per set (a set's axes replace `base`'s;
    none: `base` alone). A specification-curve run trains every arm the claims read, several cross products."""
    arms: list[Arm] = []
    for grid in sets or [{}]:
        unknown = set(grid) - set(AXES)
        if unknown:
            raise ValueError(f"unknown arm axes {sorted(unknown)}; an arm set may give {', '.join(AXES)}")
        merged = {**{key: value for key, value in base.items() if key in AXES}, **grid}
        arms.extend(expand(**merged))
    return list(dict.fromkeys(arms))
