"""A claim actlab does not ship, checked through its engine (docs/your_claim.md walks through this file).

The paper (made up for the example): "Swish-T lowers the validation loss of a small MLP below ReLU's, by 0.3
nats on average". `run` stands in for your training script: here each seed "trains" both arms with a noisy
synthetic loss whose true gap is `params["gap"]`, so the right verdict is known (a gap of 0.5: "supported").
"""

import numpy as np
import pandas as pd

from actlab.site.page import claims_block
from actlab.studies.your_claim import ClaimDefinition, check

DEFINITION = ClaimDefinition(
    claim_id="swish-t-beats-relu",
    title="Swish-T beats ReLU on the toy MLP",
    statement="Swish-T reaches a lower validation loss than ReLU on the same seeds",
    units="nats (ReLU loss - Swish-T loss)",
    column="gain",  # the unit table's column the claim reads: one value per seed
    threshold=0.0,  # "lower by any amount": the mean gain must lie above 0 ...
    supports="above",
    margin=0.5,  # ... and within +-0.5 nats counts as "equivalent" (TOST)
    alpha=0.05,
    n=10,  # seeds of the primary design
    paper_value=0.3,  # the paper's reported gain, in the same units
    paper="Doe et al. 2026, Table 2 (made up)",
    params={"gap": 0.5, "noise": 0.2, "steps": 50},
    specifications={"noisier data": {"noise": 0.4}, "shorter training": {"steps": 20}},
)


def run(seed: int, params: dict) -> dict:
    """One seed of both arms: a few gradient steps on a noisy quadratic; Swish-T's optimum lies `gap` lower."""
    rng = np.random.default_rng(seed)
    start, losses = rng.normal(size=8), {}  # the same seed: both arms start from the same weights
    for arm, floor in (("relu", 1.0), ("swish_t", 1.0 - params["gap"])):
        w = start.copy()
        for _ in range(params["steps"]):
            w -= 0.2 * (w + params["noise"] * rng.normal(size=8))  # SGD on 0.5 |w|^2 with noisy gradients
        losses[f"loss_{arm}"] = floor + 0.5 * float(w @ w) + params["noise"] * rng.normal()
    return losses


def unit_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One unit per seed: the paired gain, ReLU's loss minus Swish-T's (positive: Swish-T better)."""
    return pd.DataFrame({"seed": runs["seed"], "gain": runs["loss_relu"] - runs["loss_swish_t"]})


if __name__ == "__main__":
    claim = check(DEFINITION, run, unit_table)
    print(claim.verdict, claim.estimate_text)
    rate, se = claim.operating.false_decisive_rate  # simulated at n = 10 and the runs' spread
    print(f"wrong decisive verdicts at the null boundary: {rate:.3f} +- {se:.3f} (alpha {DEFINITION.alpha})")
    print("at other settings:", claim.robustness.line())
    with open("swish-t-beats-relu.html", "w") as page:
        page.write(claims_block([claim]).body)
