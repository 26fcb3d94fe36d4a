"""The one fast-path switch (`actlab.kernels.fastpath`): the CPU's and a (faked) GPU's choice, the override, the one
fallback state, and that no other module gates a fast path itself. No kernel is compiled here: seconds."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

from actlab.kernels import fastpath, paths, torch_internals
from actlab.nn import fast_path_status
from actlab.train.device import maybe_compile

ACTLAB = Path(__file__).resolve().parent.parent / "actlab"
THE_SWITCH = ACTLAB / "kernels" / "fastpath.py"
# What a gate of its own looks like: a fallback state, an outer-trace test, an environment switch, a precheck.
GATE = re.compile(
    r"is_compiling\(\)|in_dispatch_mode\(\)|^_\w*failure\w*\s*[:=]|_forced_public|ACTLAB_TORCH_PUBLIC"
    r"|def compile_unavailable|def fast_entry_enabled|def entry_kind"
)


@pytest.fixture
def fresh(monkeypatch):
    """No fallback recorded, no override; whatever a test changes is undone."""
    monkeypatch.setattr(fastpath, "_failure", None)
    monkeypatch.setattr(fastpath, "_warned", False)
    monkeypatch.setattr(fastpath, "_override", None)
    monkeypatch.delenv(fastpath.ENV, raising=False)
    fastpath.read_environment()
    yield monkeypatch
    monkeypatch.delenv(fastpath.ENV, raising=False)
    fastpath.read_environment()


@pytest.fixture
def compile_calls(monkeypatch):
    """torch.compile replaced by a recorder: which models would have been compiled (nothing is)."""
    calls: list[nn.Module] = []

    def recorder(model, **options):  # noqa: ANN001, ANN202
        calls.append(model)
        return ("compiled", model)

    monkeypatch.setattr(torch, "compile", recorder)
    return calls


def test_grep_finds_one_fast_path_switch():
    offenders = [
        f"{path.relative_to(ACTLAB.parent)}:{number}: {line.strip()}"
        for path in sorted(ACTLAB.rglob("*.py"))
        if path not in (THE_SWITCH, ACTLAB / "kernels" / "torch_internals.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if GATE.search(line) and not line.lstrip().startswith(("#", '"'))
    ]
    assert not offenders, "fast-path gates outside actlab/kernels/fastpath.py:\n" + "\n".join(offenders)


def test_the_cpu_runs_the_cpu_kernels_with_every_piece(fresh, compile_calls):
    assert fastpath.default_path("cpu") == "cpu-kernels" == fastpath.path_for("cpu")
    expected = ["fast_log", "counter_rng"] + (["private_entry"] if torch_internals.checked_release() else [])
    assert fastpath.status("cpu")["pieces"] == expected
    assert paths.select_path("auto") == "compile"
    model = nn.Linear(2, 2)
    assert maybe_compile(model, enabled=False) is model and not compile_calls  # today's CPU route: no outer compile
    assert maybe_compile(model, enabled=True) == ("compiled", model)  # TrainConfig.compile=True still compiles


def test_a_gpu_gets_public_torch_compile_and_no_cpu_piece(fresh, compile_calls):
    cuda = torch.device("cuda")  # faked: only its type is read, no GPU is touched
    assert fastpath.default_path("cuda") == "compiled" == fastpath.path_for("cuda")
    assert fastpath.default_path("mps") == "compiled"
    assert fastpath.status("cuda")["pieces"] == []
    assert not any(fastpath.enabled(piece, "cuda") for piece in fastpath.PIECES)
    model = nn.Linear(2, 2)
    assert maybe_compile(model, enabled=False, device=cuda) == ("compiled", model)  # the normal route is compiled
    assert compile_calls == [model]


def test_an_unchecked_torch_keeps_the_path_but_not_the_private_entry(fresh):
    assert not fastpath.enabled("private_entry", "cpu", torch_version="2.99.0")
    assert fastpath.enabled("fast_log", "cpu", torch_version="2.99.0")
    assert fastpath.enabled("private_entry", "cpu", torch_version="2.13.1") == (
        fastpath.enabled("private_entry", "cpu") or not torch_internals.checked_release()
    )


def test_one_environment_override_wins_and_names_bad_values(fresh, compile_calls):
    model = nn.Linear(2, 2)
    fresh.setenv(fastpath.ENV, "eager")
    fastpath.read_environment()
    assert fastpath.path_for("cpu") == fastpath.path_for("cuda") == "eager"
    assert paths.select_path("auto") == "function"  # no kernels: the eager Function
    assert maybe_compile(model, enabled=True, device=torch.device("cuda")) is model  # "eager" means no compile at all
    assert fastpath.enabled("counter_rng", "cpu")  # the same noise as the CPU's default, slower
    fresh.setenv(fastpath.ENV, "compiled")
    fastpath.read_environment()
    assert maybe_compile(model, enabled=False) == ("compiled", model)
    assert fastpath.status("cpu")["pieces"] == []
    fresh.setenv(fastpath.ENV, "fast")
    with pytest.raises(ValueError, match="eager, compiled, cpu-kernels"):
        fastpath.read_environment()
    with fastpath.use("eager"):
        assert fastpath.path_for("cpu") == "eager"


def test_one_fallback_state_is_recorded_once_and_read_by_every_gate(fresh):
    with pytest.warns(RuntimeWarning, match="compiling failed: RuntimeError: no compiler"):
        fastpath.record_failure(RuntimeError("no compiler\nmore detail"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: a later failure keeps the first reason, silently
        fastpath.record_failure(RuntimeError("another"))
    status = fastpath.status("cpu")
    assert status["path"] == "eager" and status["fallback_reason"] == "compiling failed: RuntimeError: no compiler"
    assert paths.select_path("auto") == "function"  # activations: the eager Function
    assert fast_path_status() == status  # actlab.nn's name reads the same state
    made = []

    def make():  # noqa: ANN202
        made.append(1)
        return "eager kernel"

    fresh.setattr(paths, "compile_standalone", lambda *args: pytest.fail("compiled after the fallback"))
    kernel = paths.cached_kernel(("test",), make, lambda: [], True, torch.zeros(2, 3))
    assert kernel == "eager kernel" and made == [1]  # routers: their eager kernels
    assert fastpath.enabled("counter_rng", "cpu")  # the fallback keeps the noise: same numbers, slower


def test_a_missing_compiler_is_the_same_fallback(fresh):
    fresh.setattr(fastpath, "compile_unavailable", lambda device_type: "no C++ compiler (g++ not found)")
    with pytest.warns(RuntimeWarning, match="g\\+\\+ not found"):
        assert not fastpath.compiles_kernels("cpu")
    assert fastpath.status("cpu")["fallback_reason"] == "no C++ compiler (g++ not found)"


def test_pieces_can_be_switched_off_one_at_a_time(fresh):
    with fastpath.without("fast_log"):
        assert not fastpath.enabled("fast_log") and fastpath.enabled("counter_rng")
        assert "fast_log" not in fastpath.kernel_key("cpu")[1]  # kernels traced without it are cached apart
    assert fastpath.enabled("fast_log")
    with pytest.raises(ValueError, match="unknown fast-path piece 'fast_sin'"), fastpath.without("fast_sin"):
        pass
