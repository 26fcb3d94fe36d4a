"""The compute-time-matched comparison is repeatable under load: the same sweep alone and beside a CPU-bound
process reaches the same steps per arm (within 5%) and the same verdicts.

Slow (16 comparison runs of 4 arms, the default sweep's 8 seeds twice; 101 s on an idle 2-core machine). The two
sweeps are run in halves, in the order alone, burner, burner, alone (seeds 0-3, then 4-7), so a drift in the rest
of the machine's load hits both alike. Compute time is anchored on ReLU (`actlab.train.slices`): ReLU's steps are
fixed, the others follow their cost relative to it. At 4 seeds the steps moved by at most 2.2% but the cubic's
verdict, at its boundary there, flipped (inconclusive / supported); at the sweep's own 8 seeds it did not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from actlab.studies.compare import claims
from actlab.sweep import ExecutorOptions, load_spec, run_sweep

pytestmark = pytest.mark.slow

RUN = Path(__file__).resolve().parent.parent / "notebooks" / "compare" / "run.ipynb"
ARMS = ("cubic", "xielu", "relu", "gelu")


def _spec(folder: Path, seeds: list[int]):
    path = folder / "clock.yml"
    path.write_text(
        f"name: clock\nnotebook: {RUN}\ngrid:\n  task: [fashion_mnist]\nseeds: {seeds}\nfixed:\n"
        f'  activations: {",".join(ARMS)}\n  derive: {{cubic: {{pos: "x**3", neg: "exp(x)"}}}}\n'
        "  matchings: seconds\n  compute_steps: 180\n  rounds: 3\n"
    )
    return load_spec(path)


def _sweep(runs: Path, seeds: list[int], burner: bool) -> None:
    competitor = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if burner else None
    try:
        outcome = run_sweep(_spec(runs, seeds), runs_dir=runs, options=ExecutorOptions(workers=1), progress=False)
    finally:
        if competitor is not None:
            competitor.kill()
            competitor.wait()
    assert outcome.counts() == {"ok": len(seeds)}, outcome.statuses


def _verdicts(runs: Path) -> tuple[dict[str, float], dict[str, str]]:
    study = claims.load_runs(runs, ["clock"])
    steps = study.arms.groupby("activation")["steps"].sum().to_dict()
    settings = claims.Settings(candidates=("cubic", "xielu"), n_simulations=100)
    found = claims.claims(study, settings)
    for claim in found:
        print(f"{claim.claim_id}: {claim.verdict}, {claim.estimate:+.2f} [{claim.ci[0]:+.2f}, {claim.ci[1]:+.2f}]")
    return steps, {claim.claim_id: claim.verdict for claim in found}


def test_steps_and_verdicts_do_not_move_with_a_cpu_bound_process_beside_the_sweep(tmp_path):
    alone, beside = tmp_path / "alone", tmp_path / "beside"
    alone.mkdir(), beside.mkdir()
    loads = [os.getloadavg()[0]]
    first, all_seeds = list(range(4)), list(range(8))  # the default sweep's 8 seeds, in two halves
    for runs, seeds, burner in ((alone, first, False), (beside, first, True), (beside, all_seeds, True),
                                (alone, all_seeds, False)):  # fmt: skip
        _sweep(runs, seeds, burner)
        loads.append(os.getloadavg()[0])
    steps_alone, verdicts_alone = _verdicts(alone)
    steps_beside, verdicts_beside = _verdicts(beside)
    change = {arm: steps_beside[arm] / steps_alone[arm] - 1 for arm in ARMS}
    print(f"\nload averages (1 min) between the four half-sweeps: {[round(x, 2) for x in loads]}")
    print(f"steps over 8 seeds, alone: {steps_alone}; beside a CPU-bound process: {steps_beside}")
    print("change: " + ", ".join(f"{arm} {100 * c:+.1f}%" for arm, c in change.items()))
    print(f"verdicts alone: {verdicts_alone}\nverdicts beside: {verdicts_beside}")
    assert all(abs(c) <= 0.05 for c in change.values()), change
    assert verdicts_alone == verdicts_beside and verdicts_alone
