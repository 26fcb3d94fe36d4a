"""A run cannot change the next run's results in the same worker (issue 45, item 1).

A poisoning notebook changes every kind of interpreter state a notebook can reach: a torch function monkeypatched
(and one patched to call a name of its own notebook), the default dtype, torch's thread count, deterministic
algorithms, environment variables, a `sys.modules` entry, `sys.path`, a builtin, an activation registry entry.
Then a victim notebook, which mentions none of it, runs in the same worker through the sweep machinery. Its results
must equal, bit for bit, those of the same run before the poisoning (the first kernel of the worker's fresh
template), and the values a fresh interpreter gives.
"""

from __future__ import annotations

import os
from pathlib import Path

from toy_notebook import write_notebook

from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, plan, run_sweeps

POISON = """\
import builtins, os, sys, types
import torch
import torch.nn.functional as F
import actlab
from actlab import activations

def helper(x):  # the victim never mentions this name; a kept kernel's reset deleted it, the patch kept calling it
    return torch.zeros_like(x)

F.relu = lambda input, inplace=False: input.abs()
F.gelu = lambda input, approximate="none": helper(input)
torch.set_default_dtype(torch.float64)
torch.set_num_threads(torch.get_num_threads() + 3)
torch.use_deterministic_algorithms(True)
os.environ["OMP_NUM_THREADS"] = "7"
os.environ["ACTLAB_POISONED"] = "1"
fake = types.ModuleType("statistics")
fake.mean = lambda values: 42.0
sys.modules["statistics"] = fake
sys.path.insert(0, "/nonexistent/poison")
builtins.abs = lambda value: 7
object.__setattr__(activations.get_spec("gelu"), "factory", torch.nn.ReLU)  # the registry's gelu builds a ReLU
actlab.record(poisoned=1.0, kernel_pid=os.getpid())
"""

VICTIM = """\
import os, statistics, sys
import torch
import torch.nn.functional as F
import actlab
from actlab import activations
from actlab.train import seed_everything

x = torch.linspace(-1, 1, 5)
try:
    gelu = [float(v) for v in F.gelu(x)]
except NameError as error:
    gelu = f"NameError: {error}"
built = activations.resolve("gelu")
deterministic = torch.are_deterministic_algorithms_enabled()  # before seed_everything, which turns it on
seed_everything(seed)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
inputs = torch.randn(32, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    optimizer.zero_grad()
    loss = (model(inputs) - inputs.sum(dim=1, keepdim=True)).square().mean()
    loss.backward()
    optimizer.step()
actlab.record(
    relu_sum=float(F.relu(x).sum()),
    gelu=gelu,
    dtype=str(torch.get_default_dtype()),
    threads=torch.get_num_threads(),
    deterministic=deterministic,
    env={name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "ACTLAB_POISONED")},
    mean=statistics.mean([1.0, 2.0]),
    path=sys.path,
    abs=abs(-3),
    registry=[type(built).__name__, [float(v) for v in built(x)]],
    weights=[float(w) for w in torch.cat([p.detach().flatten() for p in model.parameters()])],
    dtype_of_weights=str(model[0].weight.dtype),
    kernel_pid=os.getpid(),
)
"""


def _spec(folder: Path, name: str, notebook: str) -> Path:
    path = folder / f"{name}.yml"
    path.write_text(f"name: {name}\nnotebook: {notebook}\nseeds: [0]\n")
    return path


def _run(spec_path: Path, runs: Path) -> tuple[dict, dict]:
    folder = plan(load_spec(spec_path), runs)[0].folder
    return read_json(folder / "status.json"), read_json(folder / "results.json")


def test_a_poisoning_run_leaves_the_next_run_in_its_worker_bit_for_bit_as_before_it(tmp_path):
    write_notebook(tmp_path / "poison.ipynb", ["seed = 0\n"], POISON)
    write_notebook(tmp_path / "victim.ipynb", ["seed = 0\n"], VICTIM)
    before = _spec(tmp_path, "before", "victim.ipynb")
    poison, victim = _spec(tmp_path, "poison", "poison.ipynb"), _spec(tmp_path, "victim", "victim.ipynb")
    runs = tmp_path / "runs"
    # One pool with one worker: the victim, the poisoning run, then the victim again, one after the other.
    run_sweeps(
        [load_spec(before), load_spec(poison), load_spec(victim)], runs, ExecutorOptions(workers=1), progress=False
    )

    fresh_status, alone = _run(before, runs)
    poison_status, poison_results = _run(poison, runs)
    after_status, after = _run(victim, runs)
    assert poison_status["status"] == after_status["status"] == fresh_status["status"] == "ok"
    assert poison_results["poisoned"] == 1.0
    assert fresh_status["pid"] == poison_status["pid"] == after_status["pid"]  # one worker ran all three
    assert fresh_status["kernel_template_forks"] == 0  # the victim first ran in the template's first kernel
    victim_kernel = after.pop("kernel_pid")
    alone.pop("kernel_pid")
    assert after == alone  # every value, float for float
    # ... and they are what a fresh interpreter gives
    assert after["relu_sum"] == 1.5 and after["abs"] == 3 and after["mean"] == 1.5
    assert isinstance(after["gelu"], list) and after["gelu"][2] == 0.0 and after["gelu"][4] > 0.8
    assert after["registry"][0] == "GELU" and after["registry"][1] == after["gelu"]
    assert after["dtype"] == after["dtype_of_weights"] == "torch.float32" and after["deterministic"] is False
    assert after["env"] == {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "ACTLAB_POISONED": None}  # ours
    assert "/nonexistent/poison" not in after["path"]
    assert victim_kernel != poison_results["kernel_pid"]  # each run its own kernel
