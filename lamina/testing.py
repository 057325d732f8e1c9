"""`lamina.testing` (torch.testing): assert_close, with PyTorch's default tolerances per
dtype and its messages, and make_tensor, for a user's own tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor

# PyTorch's defaults: (rtol, atol) by dtype, exact for the rest
_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
               np.dtype(np.float64): (1e-7, 1e-7), np.dtype(np.complex64): (1.3e-6, 1e-5),
               np.dtype(np.complex128): (1e-7, 1e-7)}


def _array(x: Any) -> np.ndarray:
    return x.detach().numpy() if isinstance(x, Tensor) else np.asarray(x)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless |actual - expected| <= atol + rtol * |expected|
    elementwise, shapes (and dtypes, with check_dtype) equal; sequences and mappings
    compared item by item. Give rtol and atol both or neither.

    Examples:
        >>> lm.testing.assert_close(lm.tensor([1.0, 2.0]), lm.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError("assert_close: both 'rtol' and 'atol' must be either specified or "
                         "omitted")
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            raise AssertionError(msg or f"The keys do not match: {sorted(actual)} != "
                                        f"{sorted(expected)}")
        for key in expected:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(expected, Sequence) and not isinstance(expected, str) and \
            not isinstance(expected, Tensor):
        if len(actual) != len(expected):
            raise AssertionError(msg or f"The length of the sequences mismatch: {len(actual)} "
                                        f"!= {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    a, e = _array(actual), _array(expected)
    tensors = isinstance(actual, Tensor) or isinstance(expected, Tensor)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                                    f"{dtypes.Size(a.shape)!r} != {dtypes.Size(e.shape)!r}.")
    if check_dtype and tensors and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: "
                                    f"lamina.{a.dtype} != lamina.{e.dtype}.")
    if rtol is None:
        rtol, atol = max(_TOLERANCES.get(a.dtype, (0.0, 0.0)), _TOLERANCES.get(e.dtype,
                                                                               (0.0, 0.0)))
    # the differences in the inputs' own float dtype, as PyTorch reports them
    common = np.result_type(a.dtype, e.dtype)
    common = common if common.kind in "iufc" else np.dtype(np.float64)
    a64, e64 = a.astype(common), e.astype(common)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - e64)
        ok = diff <= atol + rtol * np.abs(e64)
    ok |= a64 == e64  # infinities of one sign
    if equal_nan:
        ok |= np.isnan(a64) & np.isnan(e64)
    if ok.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    raise AssertionError(_report(a64, e64, diff, ok, rtol, atol))


def _worst(values: np.ndarray, ok: np.ndarray) -> tuple[int, ...]:
    """Where the largest mismatch is: the first NaN among them, if any."""
    bad = np.where(ok, -np.inf, values.astype(np.float64))
    nan = np.isnan(bad)
    flat = int(np.argmax(nan)) if nan.any() else int(np.argmax(bad))
    return tuple(int(i) for i in np.unravel_index(flat, values.shape))


def _report(a: np.ndarray, e: np.ndarray, diff: np.ndarray, ok: np.ndarray, rtol: float,
            atol: float) -> str:
    """PyTorch's message: "not equal" and no allowances where both tolerances are 0."""
    exact = rtol == 0 and atol == 0
    word, up_a, up_r = (("equal", "", "") if exact else
                        ("close", f" (up to {atol} allowed)", f" (up to {rtol} allowed)"))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(e) if diff.dtype.kind == "f" else diff / np.abs(e).astype(float)
    if a.ndim == 0:  # PyTorch compares scalars as Python numbers: in float64
        wide = np.result_type(a, e, np.float64)
        rel = np.abs(a.astype(wide) - e) / np.abs(e.astype(wide))
        return (f"Scalars are not {word}!\n\nExpected {e.item()} but got {a.item()}.\n"
                f"Absolute difference: {diff.item()}{up_a}\n"
                f"Relative difference: {rel.item()}{up_r}")
    at_abs, at_rel = _worst(diff, ok), _worst(rel, ok)
    bad = int((~ok).sum())
    return (f"Tensor-likes are not {word}!\n\nMismatched elements: {bad} / {a.size} "
            f"({100 * bad / a.size:.1f}%)\n"
            f"Greatest absolute difference: {diff[at_abs].item()} at index {at_abs}{up_a}\n"
            f"Greatest relative difference: {rel[at_rel].item()} at index {at_rel}{up_r}")


def make_tensor(*shape: Any, dtype: Any, device: Any = None, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of `shape` with values uniform in [low, high) (by default [-9, 9) for
    floats, [-9, 10) for integers, {False, True} for bool), as PyTorch's test helper.

    Examples:
        >>> lm.testing.make_tensor(2, 3, dtype=lm.float32).shape
        lamina.Size([2, 3])
    """
    from lamina.random import numpy_rng

    shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
    d = dtypes.resolve(dtype)
    rng = numpy_rng()
    if d.kind == "b":
        values = rng.integers(0, 2, shape).astype(bool)
    elif d.kind in "iu":
        lo = -9 if low is None else int(np.ceil(low))
        values = rng.integers(max(lo, 0) if d.kind == "u" else lo,
                              10 if high is None else int(np.ceil(high)), shape).astype(d)
    else:
        values = rng.uniform(-9 if low is None else low, 9 if high is None else high,
                             shape).astype(d)
    if exclude_zero:
        values[values == 0] = 1 if d.kind != "f" else np.finfo(d).tiny
    from lamina.autograd.tensor import tensor

    return tensor(values, requires_grad=requires_grad)


__all__ = ["assert_close", "make_tensor"]
