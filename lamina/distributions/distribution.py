"""The base class of lamina.distributions: shapes, sampling without a graph, and the
argument checks PyTorch makes (`validate_args`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.dtypes import Size, get_default_dtype


class Distribution:
    """What every distribution has: `batch_shape`, `event_shape`, `sample`, `rsample`
    (where it is reparameterised), `log_prob`, `entropy`, `mean`, `variance`, `stddev`.

    Examples:
        >>> d = lm.distributions.Normal(lm.zeros(3), 1.0)
        >>> isinstance(d, lm.distributions.Distribution), d.batch_shape, d.event_shape
        (True, lamina.Size([3]), lamina.Size([]))
    """

    has_rsample = False
    _validate_default = True
    _shown: tuple[str, ...] = ()  # the parameters a repr shows

    def __init__(self, batch_shape: tuple[int, ...] = (), event_shape: tuple[int, ...] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate = self._validate_default if validate_args is None else validate_args

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Check arguments and values by default (True, PyTorch's default) or not."""
        Distribution._validate_default = bool(value)

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, Any]:
        """Each parameter's constraint (lamina.distributions.constraints), by name."""
        raise NotImplementedError(f"{type(self).__name__} has no arg_constraints")

    @property
    def support(self) -> Any:
        """The constraint every value the law gives lies in."""
        raise NotImplementedError(f"{type(self).__name__} has no support")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Draws of shape sample_shape + batch_shape + event_shape, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._draw(
                self._extended(sample_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised rsample; "
                                  "use sample()")

    def _draw(self, shape: Size) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no entropy (nor has PyTorch's)")

    def cdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no cdf")

    def icdf(self, value: Any) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no icdf")

    def _extended(self, sample_shape: Any) -> Size:
        sample_shape = (sample_shape,) if isinstance(sample_shape, int) else sample_shape
        return Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def _check(self, ok: Any, what: str) -> None:
        if self._validate and not bool(np.all(ok)):
            raise ValueError(f"{type(self).__name__}: {what}")

    def __repr__(self) -> str:
        """PyTorch's: each parameter's value where it is one number, else its shape."""
        shown = []
        for name in self._shown:
            t = getattr(self, name)
            shown.append(f"{name}: {t.item() if t.numel() == 1 else repr(t.shape)}")
        return f"{type(self).__name__}({', '.join(shown)})"


def param(value: Any, like: Tensor | None = None) -> Tensor:
    """A parameter as a float tensor (numbers in the default dtype, or like's)."""
    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else get_default_dtype()
    return as_tensor(value, dtype=dtype)
