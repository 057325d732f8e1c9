"""`lamina.autograd.forward_ad`, PyTorch's forward-mode API: inside a dual level,
`make_dual(x, t)` gives x with a tangent t, and `unpack_dual(y)` gives y's value and its
tangent J t, J the Jacobian of y in the dual tensors.

PyTorch carries tangents op by op. lamina computes one when it is asked for, from the
graph: u -> J^T u is taken with create_graph=True (so with every op's derivative rule),
then its gradient with respect to u along t is J t, the same numbers. A dual tensor
therefore requires grad (it is a view of its primal, or a new leaf of its values), and
an op with no derivative rule between it and the unpacked tensor raises on unpacking.

    >>> import lamina.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(lm.tensor([0.0, 1.0]), lm.tensor([1.0, 2.0]))
    ...     fwAD.unpack_dual(x.exp() * 3).tangent
    tensor([ 3.0000, 16.3097])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from lamina.autograd.functional import pushforward
from lamina.autograd.tensor import Tensor

# One list a dual level, innermost last: the dual tensors made in it, with their tangents.
_levels: list[list[tuple[Tensor, Tensor]]] = []


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: the value, and the tangent (None where there is none)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open a dual level (the innermost); returns its number.

    Examples:
        >>> level = lm.autograd.forward_ad.enter_dual_level()
        >>> lm.autograd.forward_ad.exit_dual_level(level=level)
    """
    _levels.append([])
    return len(_levels) - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost dual level: its dual tensors lose their tangents.

    Examples:
        >>> lm.autograd.forward_ad.exit_dual_level()  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        RuntimeError: ...
    """
    if not _levels or (level is not None and level != len(_levels) - 1):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    _levels.pop()


class dual_level:  # noqa: N801 - PyTorch's name
    """A dual level as a context manager: `with fwAD.dual_level(): ...`.

    Examples:
        >>> with lm.autograd.forward_ad.dual_level():
        ...     pass
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """`tensor` with the tangent `tangent` (of its shape) in the innermost dual level.

    Examples:
        >>> with lm.autograd.forward_ad.dual_level():
        ...     d = lm.autograd.forward_ad.make_dual(lm.ones(2), lm.ones(2))
    """
    if not _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    dual = (tensor.view_as(tensor) if tensor.requires_grad
            else tensor.detach().requires_grad_(True))
    _levels[-1 if level is None else level].append((dual, tangent.detach()))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(value, tangent) of a tensor: the tangent is J t summed over the dual tensors it
    depends on, None where it depends on none (or outside every dual level).

    Examples:
        >>> with lm.autograd.forward_ad.dual_level():
        ...     d = lm.autograd.forward_ad.make_dual(lm.ones(2), lm.tensor([1.0, 2.0]))
        ...     lm.autograd.forward_ad.unpack_dual(d * 2).tangent
        tensor([2., 4.])
    """
    primal = tensor.detach()
    if not _levels:
        return UnpackedDualTensor(primal, None)
    duals = _levels[-1 if level is None else level]
    for dual, tangent in duals:
        if dual is tensor:
            return UnpackedDualTensor(primal, tangent)
    if not tensor.requires_grad or not duals:
        return UnpackedDualTensor(primal, None)
    reached, push = pushforward([tensor], [d for d, _ in duals])
    if not reached:
        return UnpackedDualTensor(primal, None)  # depends on no dual tensor
    (jt,) = push(*[t for _, t in duals])
    return UnpackedDualTensor(primal, Tensor(np.zeros_like(primal.numpy())) if jt is None
                              else jt.detach())
