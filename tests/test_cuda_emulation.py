"""The CUDA-autocast emulation itself: bf16 matmuls, CUDA's float32 list, nothing else changed."""

from __future__ import annotations

import torch
from cuda_emulation import CUDA_FP32_OPS, cuda_autocast_emulation


def test_matmul_runs_in_bf16_and_exp_in_fp32():
    x = torch.randn(4, 8)
    w = torch.randn(8, 3)
    with cuda_autocast_emulation():
        h = x @ w
        assert h.dtype == torch.bfloat16  # CPU autocast's lower-precision list
        assert torch.exp(h).dtype == torch.float32  # CUDA's float32 list, which CPU autocast lacks
        assert h.expm1().dtype == torch.float32
        assert torch.softmax(h, dim=-1).dtype == torch.float32
        assert torch.tanh(h).dtype == torch.bfloat16  # not on the list: stays in its input dtype
    assert torch.exp(h).dtype == torch.bfloat16  # outside the block, no policy


def test_policy_lists_the_documented_ops():
    assert {"exp", "expm1", "log", "softmax", "log_softmax", "layer_norm", "softplus"} <= CUDA_FP32_OPS
