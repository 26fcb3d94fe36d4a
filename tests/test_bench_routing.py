"""`actlab bench routing` smoke test: the JSON shape and the saved-tensor accounting (nothing timed)."""

from __future__ import annotations

import json

import torch

from actlab.bench import BENCHMARKS, routing


def test_quick_run_has_every_ratio_with_its_target():
    report = routing.run(quick=True)
    json.dumps(report)  # serialisable as written by `actlab bench`
    assert BENCHMARKS["routing"] == "actlab.bench.routing"
    rows = {row["what"]: row for row in report["ratios"]}
    targets = {row["what"]: row["target"] for row in report["ratios"] if row["target"] is not None}
    assert targets == {
        "Flex-Act all layers (compiled lean) step": routing.STEP_TARGET,
        "Flex-Act all layers (lean + recompute_routed_outputs) step": routing.STEP_TARGET,
        "Flex-Act all layers (compiled lean, fused with the next Linear) step": routing.STEP_TARGET,
        "Flex-Act all layers (compiled lean, fused with the next Linear) saved bytes (unique)": routing.MEMORY_TARGET,
        "Flex-Act all layers (compiled lean) saved bytes (unique)": routing.MEMORY_TARGET,
        "Flex-Act all layers (lean + recompute_routed_outputs) saved bytes (unique)": routing.MEMORY_TARGET,
        "Flex-Act default FlexAct() in nn.Sequential step": routing.STEP_TARGET,
        "Flex-Act default FlexAct() in nn.Sequential saved bytes (unique)": routing.MEMORY_TARGET,
        "Flex-Act default FlexAct() via actlab.models.build_mlp step": routing.STEP_TARGET,
        "Flex-Act default FlexAct() via actlab.models.build_mlp saved bytes (unique)": routing.MEMORY_TARGET,
        "SmartMixed phase 1 corrected (fused, eager kernels) vs single_relu step": routing.PHASE1_TARGET,
        "SmartMixed phase 2 grouped vs single_relu step": routing.GROUPED_TARGET,
    }
    # FlexAct() as a user builds it is compiled even in the quick (otherwise eager) configuration
    assert all(rows[what]["details"]["compiled"] for what in rows if "default FlexAct()" in what and "step" in what)
    assert report["machine"]["routing_fast_path"]["path"] in ("cpu-kernels", "eager")
    for row in rows.values():
        assert row["ratio"] > 0 and row["unit"] in ("time", "bytes", "MB")
        assert row["measured_on"]["threads"] == routing.QUICK.threads  # timed at the benchmark's thread count
        assert row["measured_on"]["cpu"].startswith(report["machine"]["cpu"]["model"])
        assert row["met"] is None or row["met"] == (row["ratio"] <= row["target"])
    assert report["machine"]["config"]["width"] == routing.QUICK.width
    assert len(report["machine"]["load_average_before_after"]) == 2


def test_saved_tensor_accounting():
    config = routing.QUICK
    arms = routing.flexact_arms(config)
    relu = routing.saved_tensor_bytes(arms["relu"], config)
    lean = routing.saved_tensor_bytes(arms["flexact_eager"], config)
    recompute = routing.saved_tensor_bytes(arms["flexact_recompute"], config, recompute=True)
    fused = routing.saved_tensor_bytes(arms["flexact_fused"], config)
    default_sequential = routing.saved_tensor_bytes(arms["flexact_default_sequential"], config)
    default_builder = routing.saved_tensor_bytes(arms["flexact_default_builder"], config)
    plain = routing.saved_tensor_bytes(arms["flexact_reference"], config)
    hidden = config.batch * config.width * 4  # one float32 (batch, width) tensor
    # ReLU keeps one (batch, width) tensor per hidden layer; lean Flex-Act keeps h and x.
    assert lean["unique"] - relu["unique"] >= config.hidden_layers * hidden
    assert abs(recompute["unique"] - relu["unique"]) < hidden / 4
    assert abs(fused["unique"] - relu["unique"]) < hidden / 4  # the block keeps h where ReLU keeps relu(h)
    assert default_builder == fused  # the builder's RoutedSequential is the fused block, layers in place
    assert default_sequential["unique"] == lean["unique"]  # a plain Sequential keeps h and the router's output
    assert plain["unique"] > 3 * lean["unique"]


def test_phase2_arms_compute_the_same_function():
    arms = routing.smartmixed_arms(routing.QUICK)
    x = torch.randn(8, routing.QUICK.inputs)
    with torch.no_grad():
        grouped = arms["grouped"].eval()(x)
        for name in ("mask_all_six", "gather_scatter"):
            torch.testing.assert_close(arms[name].eval()(x), grouped, rtol=1e-5, atol=1e-6)
