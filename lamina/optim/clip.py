"""Gradient clipping in place on parameters' `.grad`, returning plain floats: lamina's own
names under `lamina.optim` (the work lives in lamina/nn/utils/clip_arrays.py, beside
PyTorch's `nn.utils.clip_grad_norm_`)."""

from lamina.nn.utils.clip_arrays import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
