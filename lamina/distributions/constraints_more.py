"""The rest of PyTorch's constraints (re-exported by constraints.py): those on matrices
(triangular, Cholesky factors, correlation Cholesky factors, symmetric and positive
(semi)definite), on pieces of a tensor (cat, stack), on counts (multinomial), and the
placeholder for a support that depends on the parameters (`dependent`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.distributions.constraints import Constraint, _bound

__all__ = ["MixtureSameFamilyConstraint", "cat", "corr_cholesky", "dependent",
           "dependent_property", "is_dependent", "lower_cholesky", "lower_triangular",
           "multinomial", "positive_definite", "positive_semidefinite", "square", "stack",
           "symmetric"]


class _Dependent(Constraint):
    """A support that depends on the parameters: its check cannot answer."""

    def __init__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> _Dependent:
        return _Dependent(
            is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
            event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, value: Any) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether a constraint (or one reinterpreted by `independent`) is `dependent`."""
    while hasattr(constraint, "base_constraint"):
        constraint = constraint.base_constraint
    return isinstance(constraint, _Dependent)


class dependent_property(property, _Dependent):  # noqa: N801 - PyTorch's name
    """A distribution's `support` computed from its parameters, as a property."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __repr__(self) -> str:
        return "DependentProperty()"

    def __call__(self, fn: Any) -> dependent_property:  # type: ignore[override]
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _Matrix(Constraint):
    """A constraint on the last two dims: `_holds_matrix` answers per matrix."""

    event_dim = 2

    def _holds(self, v: np.ndarray) -> Any:
        return np.asarray(self._holds_matrix(v))[..., None, None]


class _LowerTriangular(_Matrix):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        return (np.tril(v) == v).all((-2, -1))


class _LowerCholesky(_Matrix):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        positive = (np.diagonal(v, axis1=-2, axis2=-1) > 0).all(-1)
        return (np.tril(v) == v).all((-2, -1)) & positive


class _CorrCholesky(_Matrix):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        tol = np.finfo(v.dtype).eps * v.shape[-1] * 10
        unit_rows = (np.abs(np.linalg.norm(v, axis=-1) - 1) <= tol).all(-1)
        return _LowerCholesky()._holds_matrix(v) & unit_rows


class _Square(_Matrix):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        return np.full(v.shape[:-2], v.shape[-2] == v.shape[-1], bool)


class _Symmetric(_Square):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        if v.shape[-2] != v.shape[-1]:
            return np.zeros(v.shape[:-2], bool)
        return np.isclose(v, np.swapaxes(v, -1, -2), atol=1e-6).all((-2, -1))


class _PositiveSemidefinite(_Symmetric):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        ok = super()._holds_matrix(v)
        if not ok.any():
            return ok
        return ok & (np.linalg.eigvalsh(v) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def _holds_matrix(self, v: np.ndarray) -> Any:
        ok = np.array(super()._holds_matrix(v))
        flat, answer = v.reshape(-1, *v.shape[-2:]), ok.reshape(-1)
        for i, m in enumerate(flat):
            if answer[i]:
                try:
                    np.linalg.cholesky(m)
                except np.linalg.LinAlgError:
                    answer[i] = False
        return answer.reshape(ok.shape)


class _Multinomial(Constraint):
    is_discrete = True
    event_dim = 1

    def __repr__(self) -> str:  # PyTorch's shows no bound
        return "Multinomial()"

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def _holds(self, v: np.ndarray) -> Any:
        return (((v >= 0).all(-1)) & (v.sum(-1) <= _bound(self.upper_bound)))[..., None]


class _Cat(Constraint):
    """Each piece of `dim` (of `lengths`, 1 each by default) in its own constraint."""

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("cat: give one length per constraint")
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        self.event_dim = max(c.event_dim for c in self.cseq)

    def __repr__(self) -> str:
        return "Cat()"

    def check(self, value: Any) -> Tensor:
        pieces, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            pieces.append(c.check(value.narrow(self.dim, start, n)).numpy())
            start += n
        return as_tensor(np.concatenate(pieces, self.dim))


class _Stack(Constraint):
    """Each index of `dim` in its own constraint."""

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.is_discrete = any(c.is_discrete for c in self.cseq)
        self.event_dim = max(c.event_dim for c in self.cseq)
        if self.dim - self.event_dim >= 0:
            self.event_dim += 1

    def __repr__(self) -> str:
        return "Stack()"

    def check(self, value: Any) -> Tensor:
        return as_tensor(np.stack([c.check(value.select(self.dim, i)).numpy()
                                   for i, c in enumerate(self.cseq)], self.dim))


class MixtureSameFamilyConstraint(Constraint):
    """A mixture's support: its components', all of them, at each value."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint
        self.is_discrete, self.event_dim = base_constraint.is_discrete, base_constraint.event_dim

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"

    def check(self, value: Any) -> Tensor:
        ok = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim)).numpy()
        keep = value.ndim - self.event_dim
        return as_tensor(ok.reshape(*ok.shape[:keep], -1).all(-1))


dependent = _Dependent()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
multinomial = _Multinomial
cat = _Cat
stack = _Stack
