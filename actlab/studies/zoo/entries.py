"""The zoo: the related work's activations, each with its formula, its source and how actlab builds it.

Why a table: the related work (`../shared/seeds/002_*`, `003_*`) names dozens of activations, each reported to win
on its own tasks; a researcher needs them side by side under one protocol, and exactly which function was trained:

- `formula`: the definition as the paper gives it (LaTeX), with the constants chosen;
- `reference`: an independent NumPy closed form, which `tests/test_zoo_entries.py` holds the built module to;
- `build`: `registry` (`actlab.activations`), `module` (`actlab.studies.zoo.modules`, resolved as a user's module
  is) or `derived`: `actlab derive`'s recipe on a published gradient g from `actlab.symbolic.published.CORPUS`
  (f' = alpha g + beta on each side, alpha = softplus(a) trainable from 0.8, beta = 0.5, xIELU's
  parameterisation). A derived entry is that integrated, trainable version, not the published function: its
  reference is 0.8 (F(x) - F(0)) + 0.5 x with F the corpus's antiderivative.

`paper_claim` quotes what the entry's paper claims that the zoo's tasks can test; `claims` tests exactly that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from actlab.names import NameTable
from actlab.symbolic.defaults import XIELU_DEFAULTS
from actlab.symbolic.published import PUBLISHED

MODULES = "actlab.studies.zoo.modules"
BUILDS = ("registry", "module", "derived")
Reference = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ZooEntry:
    """One activation of the zoo (see the module docstring for each field's role)."""

    name: str  # what runs, tables and claims call it
    label: str  # how papers name it
    formula: str  # LaTeX, without $
    source: str  # paper, year
    build: str  # registry | module | derived
    spec: str  # what `actlab.activations.resolve` takes (derived: the name the run saves it under)
    reference: Reference
    parameters: dict[str, float] = field(default_factory=dict)  # trainable ones: name -> published initial value
    gradient: str = ""  # derived: the published gradient g (CORPUS), used on both sides
    paper_claim: str = ""  # what its paper claims against ReLU that the zoo's tasks can test; "" = nothing testable


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _selu(x: np.ndarray) -> np.ndarray:
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    return scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0.0)))


def _xielu(x: np.ndarray) -> np.ndarray:
    a_p, a_n, beta = XIELU_DEFAULTS.alpha_p_init, XIELU_DEFAULTS.alpha_n_init, XIELU_DEFAULTS.beta
    negative = a_n * np.expm1(np.minimum(x, 0.0)) - a_n * x + beta * x
    return np.where(x > 0, a_p * x * x + beta * x, negative)


def _xiprelu(x: np.ndarray) -> np.ndarray:
    a_p, a_n, beta = XIELU_DEFAULTS.alpha_p_init, XIELU_DEFAULTS.alpha_n_init, XIELU_DEFAULTS.beta
    return np.where(x > 0, a_p * x * x, a_n * x * x) + beta * x


def _smelu(x: np.ndarray, b: float = 1.0) -> np.ndarray:
    return np.where(x >= b, x, np.where(x <= -b, 0.0, (x + b) ** 2 / (4 * b)))


def _registry(name: str, label: str, formula: str, source: str, reference: Reference, **extra: object) -> ZooEntry:
    return ZooEntry(name, label, formula, source, "registry", name, reference, **extra)  # type: ignore[arg-type]


def _module(
    name: str, attr: str, label: str, formula: str, source: str, reference: Reference, **extra: object
) -> ZooEntry:
    return ZooEntry(name, label, formula, source, "module", f"{MODULES}:{attr}", reference, **extra)  # type: ignore[arg-type]


def _derived(name: str, corpus_name: str) -> ZooEntry:
    """The recipe on PUBLISHED[corpus_name]'s gradient, both sides; reference from the corpus's antiderivative."""
    import sympy as sp

    published = PUBLISHED[corpus_name]
    assert published.antiderivative is not None, f"{corpus_name} has no closed-form antiderivative"
    symbol = sp.Symbol("x", real=True)
    antiderivative = sp.sympify(published.antiderivative, locals={"x": symbol})
    F = sp.lambdify(symbol, antiderivative, modules=["scipy", "numpy"])
    F0 = float(antiderivative.subs(symbol, 0))
    alpha, beta = XIELU_DEFAULTS.alpha_p_init, XIELU_DEFAULTS.beta

    def reference(x: np.ndarray) -> np.ndarray:
        return alpha * (np.asarray(F(x), dtype=float) - F0) + beta * x

    return ZooEntry(
        name,
        f"{corpus_name} gradient, integrated",
        rf"\int_0^x \left(\alpha\, g(t) + \beta\right) dt,\ g(x) = {sp.latex(sp.sympify(published.gradient))}",
        f"{published.source} (gradient); integrated as in Huang & Schlag 2024",
        "derived",
        name,
        reference,
        parameters={"alpha_p": XIELU_DEFAULTS.alpha_p_init, "alpha_n": XIELU_DEFAULTS.alpha_n_init},
        gradient=published.gradient,
    )


BEATS_RELU = "reported to outperform ReLU"

# A table, one entry per line or two (name, label, LaTeX formula, source, NumPy reference): the formatter would
# spread each over up to ten lines and the entries would no longer read down.
ENTRIES: tuple[ZooEntry, ...] = (
    _registry("relu", "ReLU", r"\max(x, 0)", "Nair & Hinton 2010", lambda x: np.maximum(x, 0.0)),
    _registry("leaky_relu", "Leaky ReLU", r"x \text{ if } x > 0 \text{ else } 0.01 x", "Maas et al. 2013",
              lambda x: np.where(x > 0, x, 0.01 * x)),
    _registry("elu", "ELU", r"x \text{ if } x > 0 \text{ else } e^x - 1", "Clevert et al. 2016",
              lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0.0))), paper_claim=BEATS_RELU),
    _registry("selu", "SELU", r"\lambda\,(x \text{ if } x > 0 \text{ else } \alpha (e^x - 1)),\ \lambda \approx "
              r"1.0507,\ \alpha \approx 1.6733", "Klambauer et al. 2017", _selu, paper_claim=BEATS_RELU),
    _registry("gelu", "GELU", r"x\,\Phi(x)", "Hendrycks & Gimpel 2016",
              lambda x: x * special.ndtr(x), paper_claim=BEATS_RELU),
    _registry("silu", "SiLU / Swish", r"x\,\sigma(x)", "Elfwing et al. 2018; Ramachandran et al. 2017",
              lambda x: x * special.expit(x), paper_claim=BEATS_RELU),
    _registry("tanh", "tanh", r"\tanh x", "LeCun et al. 1998", np.tanh),
    _registry("relu2", "ReLU²", r"\max(x, 0)^2", "So et al. 2021 (Primer)", lambda x: np.maximum(x, 0.0) ** 2,
              paper_claim=BEATS_RELU),
    _registry("xielu", "xIELU", r"\alpha_p x^2 + \beta x \text{ if } x > 0 \text{ else } \alpha_n (e^x - 1) - "
              r"\alpha_n x + \beta x", "Huang & Schlag 2024", _xielu,
              parameters={"alpha_p": 0.8, "alpha_n": 0.8}),  # its claims (vs ReLU², SwiGLU) are the xielu study's
    _registry("xiprelu", "xIPReLU", r"\alpha_p x^2 + \beta x \text{ if } x > 0 \text{ else } \alpha_n x^2 + \beta x",
              "Huang & Schlag 2024", _xiprelu, parameters={"alpha_p": 0.8, "alpha_n": 0.8}),
    _module("mish", "Mish", "Mish", r"x \tanh(\mathrm{softplus}(x))", "Misra 2019",
            lambda x: x * np.tanh(_softplus(x)), paper_claim=BEATS_RELU),
    _module("softplus", "Softplus", "Softplus", r"\log(1 + e^x)", "Dugas et al. 2001", _softplus),
    _module("golu", "GoLU", "GoLU", r"x\, e^{-e^{-x}}", "Das et al. 2025",
            lambda x: x * np.exp(-np.exp(-np.clip(x, -700, None))), paper_claim=BEATS_RELU),
    _module("smelu", "SmeLU", "SmeLU", r"0,\ \tfrac{(x + b)^2}{4b},\ x \text{ for } x \le -b,\ |x| < b,\ x \ge b;"
            r"\ b = 1", "Shamir et al. 2020", _smelu),
    _module("squareplus", "Squareplus", "Squareplus", r"\tfrac{1}{2}\left(x + \sqrt{x^2 + b}\right),\ b = 4",
            "Barron 2021", lambda x: (x + np.hypot(x, 2.0)) / 2),
    _module("aptx", "APTx", "APTx", r"(\alpha + \tanh(\beta x))\, \gamma x,\ \alpha = \beta = 1,\ \gamma = "
            r"\tfrac{1}{2}", "Kumar 2022", lambda x: (1 + np.tanh(x)) * 0.5 * x),
    _module("dsilu", "DSiLU", "dSiLU", r"\sigma(x)\,(1 + x (1 - \sigma(x)))", "Elfwing et al. 2018",
            lambda x: special.expit(x) * (1 + x * (1 - special.expit(x)))),
    _module("hardswish", "Hardswish", "Hardswish", r"x\, \min(\max(x + 3, 0), 6) / 6", "Howard et al. 2019",
            lambda x: x * np.clip(x + 3, 0, 6) / 6),
    _module("tanhexp", "TanhExp", "TanhExp", r"x \tanh(e^x)", "Liu & Di 2020",
            lambda x: x * np.tanh(np.exp(np.minimum(x, 700.0))), paper_claim=BEATS_RELU),
    _module("prelu", "PReLU", "PReLU", r"x \text{ if } x > 0 \text{ else } a x,\ a \text{ trainable}",
            "He et al. 2015", lambda x: np.where(x > 0, x, 0.25 * x), parameters={"a": 0.25},
            paper_claim=BEATS_RELU),
    _module("swish_beta", "SwishBeta", "Swish-β", r"x\, \sigma(\beta x),\ \beta \text{ trainable}",
            "Ramachandran et al. 2017", lambda x: x * special.expit(x), parameters={"beta": 1.0},
            paper_claim=BEATS_RELU),
    _module("xsilu", "XSiLU", "xSiLU", r"x\,((1 + 2\alpha)\,\sigma(x) - \alpha),\ \alpha \text{ trainable}",
            "Huang 2024 (expanded gating ranges)", lambda x: x * special.expit(x), parameters={"alpha": 0.0}),
    _module("crrelu", "CRReLU", "CRReLU", r"\max(x, 0) + \varepsilon\, x\, e^{-x^2/2},\ \varepsilon \text{ trainable}",
            "Fu et al. 2024", lambda x: np.maximum(x, 0.0) + 0.01 * x * np.exp(-0.5 * x * x),
            parameters={"eps": 0.01}),
    _derived("d_softplus", "softplus"),
    _derived("d_arctan", "arctan"),
    _derived("d_isru", "ISRU"),
    _derived("d_squareplus", "squareplus"),
    _derived("d_gelu", "GELU (erf)"),
)  # fmt: skip


ZOO: NameTable[ZooEntry] = NameTable("zoo entry", {entry.name: entry for entry in ENTRIES})


def entry_names() -> list[str]:
    """Every entry's name, in the zoo's order (the order tables and figures use)."""
    return list(ZOO)


def get_entry(name: str) -> ZooEntry:
    """The entry called `name`; an unknown name fails with every valid one."""
    return ZOO[name]


def derive_table(names: list[str] | tuple[str, ...] | None = None) -> dict[str, dict[str, str]]:
    """`{name: {"pos": g, "neg": g}}` of the derived entries among `names` (all when None), for `save_derived`."""
    chosen = ENTRIES if names is None else [get_entry(name) for name in names]
    return {e.name: {"pos": e.gradient, "neg": e.gradient} for e in chosen if e.build == "derived"}
