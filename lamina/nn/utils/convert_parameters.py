"""Parameters as one flat vector and back (torch.nn.utils.parameters_to_vector)."""

from __future__ import annotations

from collections.abc import Iterable

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.functions.shape import cat


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and joined, in order (with gradients to each).

    Examples:
        >>> nn.utils.parameters_to_vector(nn.Linear(3, 2).parameters()).shape
        lamina.Size([8])
    """
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of `vec` into the parameters, in order.

    Examples:
        >>> layer = nn.Linear(2, 1)
        >>> nn.utils.vector_to_parameters(lm.zeros(3), layer.parameters()); layer.bias
        Parameter containing:
        tensor([0.], requires_grad=True)
    """
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-D Tensor; got "
                        f"{type(vec).__name__}")
    start = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[start:start + n].view_as(p))
            start += n
