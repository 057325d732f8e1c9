"""The named tuples that PyTorch's multi-result functions return (`torch.return_types`).

`x.max(dim=1)` gives a `max` with `.values` and `.indices`: unpack it, index it or read
its fields, and it prints as PyTorch's does.

    >>> lm.tensor([[3.0, 1.0], [2.0, 5.0]]).max(dim=0)
    lamina.return_types.max(
    values=tensor([3., 5.]),
    indices=tensor([0, 1]))
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any


def _structseq(name: str, fields: list[str]) -> type:
    """A named tuple that prints one field a line, as PyTorch's structseq types do."""

    def __repr__(self: Any) -> str:
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"lamina.return_types.{name}(\n{body})"

    base = namedtuple(name, fields)
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                                "__module__": "lamina.return_types"})


_VALUES = ["values", "indices"]
max = _structseq("max", _VALUES)  # noqa: A001 - PyTorch's names
min = _structseq("min", _VALUES)  # noqa: A001
sort = _structseq("sort", _VALUES)
topk = _structseq("topk", _VALUES)
kthvalue = _structseq("kthvalue", _VALUES)
median = _structseq("median", _VALUES)
nanmedian = _structseq("nanmedian", _VALUES)
mode = _structseq("mode", _VALUES)
cummax = _structseq("cummax", _VALUES)
cummin = _structseq("cummin", _VALUES)
frexp = _structseq("frexp", ["mantissa", "exponent"])
aminmax = _structseq("aminmax", ["min", "max"])
slogdet = _structseq("slogdet", ["sign", "logabsdet"])
linalg_slogdet = _structseq("linalg_slogdet", ["sign", "logabsdet"])
histogram = _structseq("histogram", ["hist", "bin_edges"])
svd = _structseq("svd", ["U", "S", "V"])
qr = _structseq("qr", ["Q", "R"])
triangular_solve = _structseq("triangular_solve", ["solution", "cloned_coefficient"])
linalg_eigh = _structseq("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = _structseq("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_svd = _structseq("linalg_svd", ["U", "S", "Vh"])
linalg_qr = _structseq("linalg_qr", ["Q", "R"])
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = _structseq("linalg_inv_ex", ["inverse", "info"])
linalg_solve_ex = _structseq("linalg_solve_ex", ["result", "info"])
linalg_lstsq = _structseq("linalg_lstsq", ["solution", "residuals", "rank",
                                           "singular_values"])
linalg_lu_factor = _structseq("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = _structseq("linalg_lu", ["P", "L", "U"])
lu_unpack = _structseq("lu_unpack", ["P", "L", "U"])
_lu_with_info = _structseq("_lu_with_info", ["LU", "pivots", "info"])
