"""Activations built from other ops (no backward of their own): relu6, hardtanh,
hardswish, hardsigmoid, mish, softsign, tanhshrink, logsigmoid, softmin, glu, threshold,
prelu, selu, celu. `inplace=` is accepted as PyTorch's signature has it; lamina computes
out of place, with the same values and gradients."""

from __future__ import annotations

from lamina.autograd.tensor import Tensor
from lamina.functions.activation import elu, softplus, tanh
from lamina.functions.activation_softmax import softmax
from lamina.functions.math import where


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """input clamped to [min_val, max_val].

    Examples:
        >>> F.hardtanh(lm.tensor([-2.0, 0.5, 2.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    return input.clamp(min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(input, 0), 6).

    Examples:
        >>> F.relu6(lm.tensor([-1.0, 3.0, 9.0]))
        tensor([0., 3., 6.])
    """
    return input.clamp(0.0, 6.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(input + 3) / 6, a piecewise-linear sigmoid.

    Examples:
        >>> F.hardsigmoid(lm.tensor([-4.0, 0.0, 4.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    return (input + 3).clamp(0.0, 6.0) / 6


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """input * relu6(input + 3) / 6 (MobileNetV3).

    Examples:
        >>> F.hardswish(lm.tensor([-4.0, 4.0]))
        tensor([-0.,  4.])
    """
    return input * hardsigmoid(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """input * tanh(softplus(input)).

    Examples:
        >>> F.mish(lm.tensor([0.0]))
        tensor([0.])
    """
    return input * tanh(softplus(input))


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """input / (1 + |input|).

    Examples:
        >>> F.softsign(lm.tensor([1.0, -3.0]))
        tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """input - tanh(input).

    Examples:
        >>> F.tanhshrink(lm.tensor([0.0]))
        tensor([0.])
    """
    return input - tanh(input)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(input)) = -softplus(-input), stable for any input.

    Examples:
        >>> round(F.logsigmoid(lm.tensor([0.0])).item(), 4)
        -0.6931
    """
    return -softplus(-input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: object = None) -> Tensor:
    """softmax(-input) along `dim`.

    Examples:
        >>> F.softmin(lm.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    return softmax(-input, dim, dtype=dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b), a and b the two halves of input along `dim`.

    Examples:
        >>> F.glu(lm.tensor([2.0, 0.0]))
        tensor([1.])
    """
    if input.shape[dim] % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """input where input > threshold, else value.

    Examples:
        >>> F.threshold(lm.tensor([0.5, 2.0]), 1.0, -1.0)
        tensor([-1.,  2.])
    """
    return where(input > threshold, input, value)


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """input where >= 0, else weight * input; weight has one entry, or one per channel
    (dim 1).

    Examples:
        >>> F.prelu(lm.tensor([[-2.0, 3.0]]), lm.tensor([0.25]))
        tensor([[-0.5000,  3.0000]])
    """
    w = weight
    if weight.numel() > 1 and input.ndim > 1:
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return where(input >= 0, input, w * input)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(input, alpha) with the self-normalising constants.

    Examples:
        >>> F.selu(lm.tensor([0.0]))
        tensor([0.])
    """
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)).

    Examples:
        >>> F.celu(lm.tensor([1.0]))
        tensor([1.])
    """
    return where(input > 0, input, ((input / alpha).exp() - 1) * alpha)

