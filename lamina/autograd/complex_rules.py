"""Which ops take complex operands, and how their backward treats them.

PyTorch's gradient of a real loss L with respect to a complex z = a + ib is dL/da + i dL/db
(twice the conjugate Wirtinger derivative). For a holomorphic op y = f(z) that is
`gy * conj(f'(z))`. An op's array backward computes `gy * f'(z)`, linear in gy with
coefficients analytic in the inputs (the same formula as for reals), so
`conj(backward(conj(gy)))` is the gradient PyTorch gives; an input that is real takes its
real part.

An op says so with its class's `complex_rule`:
- "holomorphic": the above applies (add, mul, matmul, exp, reshapes, ...);
- "own": its backward already follows PyTorch's rule for complex operands (abs, angle,
  real, the FFTs);
- None (the default): it refuses complex operands with a NotImplementedError (a
  RuntimeError, as PyTorch's "not implemented for 'ComplexFloat'" is) naming itself,
  rather than compute a gradient that would be wrong (relu, max and the like have no
  meaning on them either).

Nothing of this runs until a complex tensor has been made (`state.complex_seen`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from lamina.autograd.function import Function
    from lamina.autograd.tensor import Tensor


def _is_complex(a: Any) -> bool:
    return a is not None and getattr(a, "dtype", None) is not None and a.dtype.kind == "c"


def check_inputs(f: Function, xs: tuple[Tensor, ...]) -> bool:
    """Whether any input of f is complex; raise where f has no complex rule."""
    if not any(_is_complex(x.array) for x in xs):
        return False
    if type(f).complex_rule is None:
        raise _refusal(f)
    return True


def check_outputs(f: Function, xs: tuple[Tensor, ...], ys: Any, complex_in: bool) -> None:
    """Mark f for backward's conjugation where complex values pass through it (with which
    inputs are real); raise where an op with no complex rule made complex outputs from
    real inputs."""
    if not complex_in:
        outs = ys if isinstance(ys, tuple) else (ys,)
        if not any(_is_complex(y) for y in outs):
            return
        if type(f).complex_rule is None:
            raise _refusal(f)
    if type(f).complex_rule == "holomorphic":
        f.complex_mode = tuple(not _is_complex(x.array) for x in xs)
    else:
        f.complex_own = True  # for create_graph's refusal


def _refusal(f: Function) -> NotImplementedError:
    return NotImplementedError(
        f"{f.name}: lamina does not support complex tensors in this op; the ops that take "
        "them (arithmetic, matmul and einsum, sums and means, exp, log, powers, the "
        "trigonometric functions, shape and indexing ops, abs, angle, real, imag, conj, "
        "lamina.fft, stft, linalg.eig) are listed in the PyTorch guide's 'Complex numbers'. "
        "Work on x.real and x.imag (or lamina.view_as_real(x)) for the rest"
    )


def backward(f: Function, gys: list[Any], call: Any) -> tuple[Any, ...]:
    """A holomorphic op's gradients by PyTorch's convention: its array backward `call`
    given the conjugated output gradients, its results conjugated back, a real input's
    gradient its real part."""
    gxs = call(f, [np.conj(g) if _is_complex(g) else g for g in gys])
    if not isinstance(gxs, tuple):
        gxs = (gxs,)
    out = []
    for real, gx in zip(f.complex_mode, gxs):
        if gx is not None and _is_complex(gx):
            gx = np.ascontiguousarray(gx.real) if real else np.conj(gx)
        out.append(gx)
    return tuple(out)


def ran_on_complex(f: Function) -> bool:
    return f.complex_mode is not None or "complex_own" in vars(f)


def refuse_double_backward(f: Function) -> NotImplementedError:
    return NotImplementedError(
        f"{f.name}: create_graph=True through an op on complex tensors is not supported; "
        "lamina differentiates complex ops once"
    )
