"""The factorizations as Tensor methods, under PyTorch's older names and signatures:
svd (some=, returns V, not Vh), qr, cholesky, cholesky_solve, cholesky_inverse, pinverse,
matrix_exp, triangular_solve, lu, lu_solve. Each calls lamina.linalg, so the gradients
are its own."""

from __future__ import annotations

import warnings
from typing import Any

from lamina import return_types

svd_result = return_types.svd
qr_result = return_types.qr
triangular_solve_result = return_types.triangular_solve


_warned: set[str] = set()


def _deprecated(name: str, instead: str) -> None:
    """PyTorch's once-per-process warning for its deprecated factorization names."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"{name} is deprecated, as PyTorch's is, in favor of {instead}",
                      UserWarning, stacklevel=3)


def _linalg() -> Any:
    import lamina.linalg as linalg

    return linalg


class LinalgMethods:
    __slots__ = ()

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        """(U, S, V) with self = U diag(S) V^T: V, where linalg.svd gives Vh; reduced
        unless `some=False`; U and V zeros without `compute_uv`.

        Examples:
            >>> lm.tensor([[3.0, 0.0], [0.0, 4.0]]).svd().S
            tensor([4., 3.])
        """
        U, S, Vh = _linalg().svd(self, full_matrices=not some)
        if not compute_uv:
            return svd_result(U.detach() * 0, S, Vh.detach().mT * 0)
        return svd_result(U, S, Vh.mT)

    def qr(self, some: bool = True) -> Any:
        """(Q, R): linalg.qr, reduced unless `some=False` (deprecated, with PyTorch's warning,
        once).

        Examples:
            >>> lm.tensor([[3.0], [4.0]]).qr().R.abs()  # doctest: +SKIP
            tensor([[5.]])
        """
        _deprecated("qr", "lamina.linalg.qr(A, 'reduced' if some else 'complete')")
        return qr_result(*_linalg().qr(self, "reduced" if some else "complete"))

    def cholesky(self, upper: bool = False) -> Any:
        """linalg.cholesky (deprecated, with PyTorch's warning, once).

        Examples:
            >>> lm.tensor([[4.0]]).cholesky()  # doctest: +SKIP
            tensor([[2.]])
        """
        _deprecated("cholesky", "lamina.linalg.cholesky(A) (its .mT for upper=True)")
        return _linalg().cholesky(self, upper=upper)

    def cholesky_solve(self, input2: Any, upper: bool = False) -> Any:
        """X with A X = self, A given by its Cholesky factor `input2` (lower, or upper
        with `upper`).

        Examples:
            >>> lm.tensor([[2.0]]).cholesky_solve(lm.tensor([[2.0]]))
            tensor([[0.5000]])
        """
        from lamina.functions.factorizations import CholeskySolve

        # PyTorch's gradient for the factor is that of L L^T (CholeskySolve's note)
        return CholeskySolve().apply(self, input2.mT if upper else input2)

    def cholesky_inverse(self, upper: bool = False) -> Any:
        """The inverse of A = L L^T (U^T U with `upper`) from its Cholesky factor self.

        Examples:
            >>> lm.tensor([[2.0]]).cholesky_inverse()
            tensor([[0.2500]])
        """
        from lamina.creation import eye

        identity = eye(self.shape[-1], dtype=self.dtype).expand(*self.shape)
        return identity.cholesky_solve(self, upper)

    def pinverse(self, rcond: float = 1e-15) -> Any:
        """linalg.pinv with singular values below rcond * the largest counted as zero.

        Examples:
            >>> lm.tensor([[2.0, 0.0]]).pinverse()
            tensor([[0.5000],
                    [0.0000]])
        """
        return _linalg().pinv(self, rtol=rcond)

    def matrix_exp(self) -> Any:
        """linalg.matrix_exp.

        Examples:
            >>> lm.zeros(1, 1).matrix_exp()
            tensor([[1.]])
        """
        return _linalg().matrix_exp(self)

    def triangular_solve(self, A: Any, upper: bool = True, transpose: bool = False,
                         unitriangular: bool = False) -> Any:
        """(X, A's copy) with A X = self (A^T X = self with `transpose`), A triangular
        (deprecated, with PyTorch's warning, once).

        Examples:
            >>> lm.tensor([[3.0]]).triangular_solve(lm.tensor([[2.0]])).solution  # doctest: +SKIP
            tensor([[1.5000]])
        """
        _deprecated("triangular_solve", "lamina.linalg.solve_triangular(A, B), which has its "
                    "arguments reversed and returns no copy of A")
        T = A.mT if transpose else A
        X = _linalg().solve_triangular(T, self, upper=upper != transpose,
                                       unitriangular=unitriangular)
        return triangular_solve_result(X, A.clone())

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        """(LU, pivots), or (LU, pivots, infos) with `get_infos`: PyTorch's deprecated
        form of linalg.lu_factor (warning once, in its words); without get_infos a
        singular matrix raises.

        Examples:
            >>> lm.tensor([[1.0, 2.0], [3.0, 4.0]]).lu().pivots  # doctest: +SKIP
            tensor([2, 2], dtype=lamina.int32)
        """
        _deprecated_once("lu", (
            "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
            "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
            "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
            "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
            "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
            "should be replaced with\n"
            "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"))
        if get_infos:
            return return_types._lu_with_info(*_linalg().lu_factor_ex(self, pivot=pivot))
        return _linalg().lu_factor(self, pivot=pivot)

    def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Any:
        """X with A X = self, A given by lu_factor's (LU_data, LU_pivots): PyTorch's
        deprecated form of linalg.lu_solve, whose arguments come in the other order.

        Examples:
            >>> A = lm.tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> lm.tensor([[5.0], [11.0]]).lu_solve(*lm.linalg.lu_factor(A))  # doctest: +SKIP
            tensor([[1.],
                    [2.]])
        """
        _deprecated_once("lu_solve", (
            "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
            "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
            "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with"
            "\nX = torch.linalg.lu_solve(LU, pivots, B)"))
        return _linalg().lu_solve(LU_data, LU_pivots, self)


def _deprecated_once(name: str, message: str) -> None:
    """PyTorch's own text for a deprecation it warns of once per process."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)
