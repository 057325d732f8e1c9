"""The named tuples that PyTorch's (values, indices) functions return.

`x.max(dim=1)` gives `max(values=..., indices=...)`: unpack it, index it, or read
`.values` / `.indices`, as in PyTorch (`torch.return_types`).
"""

from __future__ import annotations

from collections import namedtuple

max = namedtuple("max", ["values", "indices"])  # noqa: A001 - PyTorch's names
min = namedtuple("min", ["values", "indices"])  # noqa: A001
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
mode = namedtuple("mode", ["values", "indices"])
aminmax = namedtuple("aminmax", ["min", "max"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
