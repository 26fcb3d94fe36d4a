"""Smoke test of `actlab bench activations`: the report's JSON shape on a tiny block (not a timed test)."""

from __future__ import annotations

import json

import pytest

from actlab.bench import activations as bench
from actlab.bench.timing import paired_ratio


def test_tiny_run_has_the_report_shape_and_the_target():
    config = bench.BlockConfig(tokens=32, d_model=8, hidden=24, repeats=2, warmup=1, use_compile=False)
    report = json.loads(json.dumps(bench.run_config(config)))  # JSON-serialisable as written
    assert report["name"] == "activations"
    assert set(report["medians_s"]) == {
        "relu2 eager",
        "xielu eager",
        "xielu fast",
        "xielu symbolic Function",
        "swiglu eager",
        "relu eager",
        "quadrature eager",
        "quadrature fast",
        "cubic fast",
    }
    against_relu = {row["candidate"]: row for row in report["ratios"] if row["baseline"] == "relu eager"}
    assert set(against_relu) == {"cubic fast", "quadrature fast", "quadrature eager", "xielu fast"}
    assert all(row["ratio"] > 0 for row in against_relu.values())
    assert against_relu["cubic fast"]["target"] == bench.DERIVED_TARGET
    assert against_relu["quadrature fast"]["target"] == bench.QUADRATURE_TARGET
    assert all(seconds > 0 for seconds in report["medians_s"].values())
    headline = report["ratios"][0]
    assert headline["candidate"] == "xielu fast" and headline["baseline"] == "relu2 eager"
    assert headline["target"] == bench.FAST_XIELU_TARGET and headline["met"] == (headline["ratio"] <= 1.03)
    details = headline["details"]
    medians = report["medians_s"]
    assert details["ratio_of_medians"] == pytest.approx(medians["xielu fast"] / medians["relu2 eager"])
    assert headline["ratio"] > 0
    assert details["block"]["gated_hidden"] == 16
    assert details["parameters"]["standard MLP (2 d h)"] == details["parameters"]["SwiGLU (3 d 2h/3)"] == 384
    assert details["xielu fast path"]["requested"] == "function"
    assert "cpus" in report["machine"]
    for row in report["ratios"]:  # every ratio says what it was measured on
        assert set(row["measured_on"]) == {"cpu", "torch", "threads"}
        assert row["measured_on"]["threads"] == report["machine"]["torch_threads"]
        assert row["measured_on"]["torch"] == report["machine"]["versions"]["torch"]


def test_block_sizes_are_validated():
    with pytest.raises(ValueError, match="divisible by 3"):
        bench.run_config(bench.BlockConfig(hidden=100))
    with pytest.raises(ValueError, match="positive"):
        bench.run_config(bench.BlockConfig(tokens=0))


def test_paired_ratio_is_the_median_of_per_round_ratios():
    times = ([2.0, 4.0, 9.0], [1.0, 2.0, 3.0])  # per-round ratios 2, 2, 3
    row = paired_ratio("what", "candidate", "baseline", times, target=2.5, details={"kept": 1})
    assert row.ratio == 2.0 and row.met and row.details["kept"] == 1 and row.details["rounds"] == 3
    assert row.details["ratio_of_medians"] == pytest.approx(4.0 / 2.0)
    low, high = row.details["ratio_ci95"]
    assert low <= row.ratio <= high


def test_fresh_processes_are_combined_by_the_median_of_each_ratio():
    config = bench.BlockConfig(tokens=32, d_model=8, hidden=24, repeats=2, warmup=1, use_compile=False)
    report = bench.run_in_fresh_processes(config, processes=2)  # real child processes, tiny sizes
    headline = report["ratios"][0]
    assert len(headline["details"]["per process"]) == 2
    assert headline["ratio"] == pytest.approx(sum(headline["details"]["per process"]) / 2)

    one = bench.run_config(config)
    reports = [json.loads(json.dumps(one)) for _ in range(3)]
    for report_, value in zip(reports, [1.2, 0.9, 1.0], strict=True):
        report_["ratios"][0]["ratio"] = value
    combined = bench.combine_reports(reports)
    assert combined["ratios"][0]["ratio"] == 1.0 and combined["ratios"][0]["met"] is True
    assert combined["ratios"][0]["details"]["per process"] == [1.2, 0.9, 1.0]


def test_benchmark_children_keep_freed_memory(monkeypatch):
    seen = {}

    class Completed:
        returncode, stderr = 0, ""
        stdout = json.dumps(
            bench.run_config(bench.BlockConfig(tokens=8, d_model=4, hidden=6, repeats=1, warmup=0, use_compile=False))
        )

    def fake_run(command, **kwargs):
        seen.update(kwargs["env"])
        return Completed()

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    bench.run_in_fresh_processes(bench.BlockConfig(), processes=1)
    assert {key: seen[key] for key in bench.STEADY_ALLOCATOR_ENV} == bench.STEADY_ALLOCATOR_ENV
    assert int(seen["MALLOC_MMAP_THRESHOLD_"]) > 4096 * 2304 * 4  # the largest activation is never mmapped
