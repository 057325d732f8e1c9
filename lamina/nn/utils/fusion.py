"""Folding an evaluation-mode batch norm into the convolution or linear layer before it
(nn.utils.fuse_conv_bn_eval and friends, PyTorch's): one layer computes what the two did,
for inference."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Parameter


def _arrays(*tensors: Any) -> list[Any]:
    return [None if t is None else np.asarray(t.detach().numpy() if isinstance(t, Tensor)
                                              else t, np.float64) for t in tensors]


def fuse_conv_bn_weights(conv_w: Any, conv_b: Any, bn_rm: Any, bn_rv: Any, bn_eps: float,
                         bn_w: Any, bn_b: Any, transpose: bool = False) -> tuple[Any, Any]:
    """The (weight, bias) Parameters of one convolution equal to conv then batch norm.

    Examples:
        >>> w, b = nn.utils.fuse_conv_bn_weights(lm.ones(2, 1, 1), None, lm.zeros(2),
        ...                                      lm.ones(2), 0.0, None, None)
        >>> w.shape, b.tolist()
        (lamina.Size([2, 1, 1]), [0.0, 0.0])
    """
    dtype = conv_w.dtype
    w, b, rm, rv, gw, gb = _arrays(conv_w, conv_b, bn_rm, bn_rv, bn_w, bn_b)
    b = np.zeros_like(rm) if b is None else b
    gw = np.ones_like(rm) if gw is None else gw
    gb = np.zeros_like(rm) if gb is None else gb
    scale = gw / np.sqrt(rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (w.ndim - 2)
    fused_w = (w * scale.reshape(shape)).astype(dtype)
    fused_b = ((b - rm) * scale + gb).astype(dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, True if conv_b is None else conv_b.requires_grad))


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of `conv` (in eval mode, as `bn`) that computes bn(conv(x)).

    Examples:
        >>> conv, bn = nn.Conv2d(1, 2, 1).eval(), nn.BatchNorm2d(2).eval()
        >>> fused = nn.utils.fuse_conv_bn_eval(conv, bn)
        >>> bool((fused(lm.ones(1, 1, 2, 2)) - bn(conv(lm.ones(1, 1, 2, 2)))).abs().max() < 1e-6)
        True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w: Any, linear_b: Any, bn_rm: Any, bn_rv: Any,
                           bn_eps: float, bn_w: Any, bn_b: Any) -> tuple[Any, Any]:
    """The (weight, bias) Parameters of one linear layer equal to linear then batch norm.

    Examples:
        >>> w, b = nn.utils.fuse_linear_bn_weights(lm.eye(2), None, lm.zeros(2), lm.ones(2),
        ...                                        0.0, lm.ones(2) * 2, lm.zeros(2))
        >>> w.tolist()
        [[2.0, 0.0], [0.0, 2.0]]
    """
    dtype = linear_w.dtype
    w, b, rm, rv, gw, gb = _arrays(linear_w, linear_b, bn_rm, bn_rv, bn_w, bn_b)
    b = np.zeros_like(rm) if b is None else b
    scale = gw / np.sqrt(rv + bn_eps)
    return (Parameter((w * scale[:, None]).astype(dtype), linear_w.requires_grad),
            Parameter(((b - rm) * scale + gb).astype(dtype),
                      True if linear_b is None else linear_b.requires_grad))


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of `linear` (in eval mode, as `bn`) that computes bn(linear(x)).

    Examples:
        >>> fc, bn = nn.Linear(2, 3).eval(), nn.BatchNorm1d(3).eval()
        >>> nn.utils.fuse_linear_bn_eval(fc, bn).bias.shape
        lamina.Size([3])
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must equal 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """module_cls(*args, **kwargs): PyTorch leaves the parameters uninitialised, whose values
    are then unspecified; lamina's are initialised, which is one such value.

    Examples:
        >>> nn.utils.skip_init(nn.Linear, 2, 3).weight.shape
        lamina.Size([3, 2])
    """
    return module_cls(*args, **kwargs)


__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init"]
