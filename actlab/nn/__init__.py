"""Trainable activation modules: xIELU and xIPReLU (torch only; SymPy loads when a symbolic path is used)."""

from actlab.nn.xielu import XIELU, XIPReLU, fast_path_status, integrated_activation, learned_alphas, select_path

__all__ = ["XIELU", "XIPReLU", "fast_path_status", "integrated_activation", "learned_alphas", "select_path"]
