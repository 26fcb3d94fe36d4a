"""`actlab bench --device`: the device benchmarks time their arms there and name the device; no silent fallback."""

from __future__ import annotations

import json

import pytest

from actlab import cli
from actlab.bench import activations, routing
from actlab.bench.timing import device_label, synchronized

TINY_BLOCK = activations.BlockConfig(tokens=32, d_model=8, hidden=24, repeats=2, warmup=1, use_compile=False)


def test_cuda_without_a_device_is_one_clear_error_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "activations", "--quick", "--device", "cuda", "--out", str(out)]) != 0
    assert "CUDA is not available" in capsys.readouterr().err
    assert not out.exists()


def test_the_cpu_label_is_plain_and_a_synchronised_step_still_runs_the_step():
    assert device_label("cpu") == "cpu"
    calls = []
    synchronized(lambda: calls.append(1), "cpu")()
    assert calls == [1]


def test_the_cpu_run_is_labelled_with_the_device_it_measured():
    report = activations.run_config(TINY_BLOCK)
    assert report["machine"]["device"] == "cpu"


@pytest.mark.cuda
def test_the_activation_blocks_are_timed_on_the_gpu_and_named_after_it():  # pragma: no cover - GPU boxes only
    import dataclasses

    report = json.loads(json.dumps(activations.run_config(dataclasses.replace(TINY_BLOCK, device="cuda"))))
    assert report["machine"]["device"].startswith("cuda:0 (")  # e.g. 'cuda:0 (NVIDIA A100-SXM4-40GB)'
    assert all(row["ratio"] > 0 for row in report["ratios"])


@pytest.mark.cuda
def test_the_routing_arms_are_timed_on_the_gpu(tmp_path):  # pragma: no cover - GPU boxes only
    report = routing.run(quick=True, device="cuda")
    assert report["machine"]["device"].startswith("cuda:")
    assert all(row["ratio"] > 0 for row in report["ratios"])
    assert not any("peak RSS" in row["what"] for row in report["ratios"])  # host memory: CPU runs only
