"""The CPU a result was measured on, as provenance records it: model, vector extensions, a one-line summary."""

from __future__ import annotations

from actlab import provenance

X86 = """processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Processor
flags		: fpu sse sse2 avx fma avx2 smep avx512f avx512dq avx512bw avx512_bf16 amx_bf16 amx_tile
processor	: 1
model name	: Intel(R) Xeon(R) Processor
flags		: fpu sse sse2 avx fma avx2 smep avx512f avx512dq avx512bw avx512_bf16 amx_bf16 amx_tile
"""
ARM = """processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes sve sve2 smep
CPU implementer	: 0x41
"""


def test_x86_model_and_vector_extensions_are_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(X86)
    description = provenance.cpu_description(cpuinfo)
    assert description["model"] == "Intel(R) Xeon(R) Processor"
    assert description["vector_extensions"] == [
        "amx_bf16", "amx_tile", "avx2", "avx512_bf16", "avx512bw", "avx512dq", "avx512f"
    ]  # fmt: skip
    summary = provenance.cpu_summary({**description, "logical_cpus": 2})
    assert summary == "Intel(R) Xeon(R) Processor; AVX2, AVX-512 (bf16, bw, dq, f), AMX (bf16, tile); 2 logical CPUs"


def test_arm_features_give_neon_and_sve_and_no_x86_flag_is_mistaken_for_one(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(ARM)
    description = provenance.cpu_description(cpuinfo)
    assert description["vector_extensions"] == ["asimd", "sve", "sve2"]  # smep is x86's, and not on a flags line here
    assert "NEON, SVE (2)" in provenance.cpu_summary(description)


def test_without_cpuinfo_the_model_falls_back_and_every_record_carries_the_cpu(tmp_path):
    description = provenance.cpu_description(tmp_path / "missing")
    assert description["model"] and description["vector_extensions"] == []
    assert set(provenance.collect()["cpu"]) == {"model", "vector_extensions", "logical_cpus", "torch_capability"}
