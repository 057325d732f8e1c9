"""Check analytic gradients against central differences in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with the numerical one; the message says where.

    Examples:
        >>> issubclass(lm.GradcheckError, AssertionError)
        True
    """


def gradcheck(fn: Callable[..., Any], inputs: Any, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-4, seed: int = 0, *,
              raise_exception: bool = True, **options: Any) -> bool:
    """Compare backward's gradients of `fn` with central differences, in float64.

    Float64 tensors that require grad are used as they are (perturbed in place, then
    restored), so a layer's parameters can be passed; other floating inputs are copied to
    float64. Those that require grad (all floating inputs when none does) are checked.
    The outputs are projected on fixed random weights r, so one backward checks the full
    Jacobian-vector product sum(r * fn(inputs)).

    Args:
        fn: takes the inputs as Tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor, or Tensors or arrays; integer ones (labels, ids) pass through
            unchanged.
        eps: the finite-difference step.
        atol, rtol: tolerances, |analytic - numeric| <= atol + rtol * |numeric|.
        raise_exception: False returns False instead of raising, as PyTorch's does.
        options: PyTorch's other checks (nondet_tol, check_undefined_grad, fast_mode,
            ...), accepted and not run.

    Returns:
        True when every element agrees.

    Raises:
        GradcheckError: naming the input, the element, and both values.

    Examples:
        >>> lm.gradcheck(lambda x: (x * x).sum(), [lm.tensor(np.ones(3), requires_grad=True)])
        True
    """
    try:
        return _check(fn, inputs, eps, atol, rtol, seed)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **options: Any) -> bool:
    """Check second derivatives, as PyTorch's gradgradcheck: the gradient of func's
    vector-Jacobian product (with `grad_outputs`, or fixed random ones), taken with
    create_graph=True, is compared with central differences of that product, in float64.

    Examples:
        >>> lm.autograd.gradgradcheck(lambda x: x.sin() * x, lm.tensor([0.5, 2.0]))
        True
    """
    from lamina.autograd.engine import grad

    xs = [_as_float64(x) for x in ((inputs,) if isinstance(inputs, Tensor) else inputs)]
    if not any(x.requires_grad for x in xs):
        for x in xs:
            x.requires_grad = x.dtype.kind == "f"
    outs = _outputs(func(*xs))
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        gos = [Tensor(rng.standard_normal(y.shape)) for y in outs]
    else:
        gos = [_as_float64(g) for g in _outputs(grad_outputs)]
    wrt = [i for i, x in enumerate(xs) if x.requires_grad]

    def vjp(*values: Tensor) -> tuple[Tensor, ...]:
        return grad(_outputs(func(*values)), [values[i] for i in wrt], gos,
                    create_graph=True, allow_unused=True, materialize_grads=True)
    return gradcheck(vjp, xs, eps, atol, rtol, raise_exception=raise_exception)


def _check(fn: Callable[..., Any], inputs: Any, eps: float, atol: float, rtol: float,
           seed: int) -> bool:
    xs = [_as_float64(x) for x in ((inputs,) if isinstance(inputs, Tensor) else inputs)]
    checked = [i for i, x in enumerate(xs) if x.requires_grad]
    if not checked:
        checked = [i for i, x in enumerate(xs) if x.dtype.kind == "f"]
        for i in checked:
            xs[i].requires_grad = True
    rng = np.random.default_rng(seed)
    outs = _outputs(fn(*xs))
    weights = [rng.standard_normal(y.shape) for y in outs]

    def objective() -> float:
        return float(sum(np.sum(y.array * w) for y, w in zip(_outputs(fn(*xs)), weights)))

    for x in xs:
        x.grad = None
    total = sum((y * Tensor(w)).sum() for y, w in zip(outs, weights))
    if total.requires_grad:  # else no output depends on the inputs: gradients are zero
        total.backward()
    for i in checked:
        _compare(i, xs[i], objective, eps, atol, rtol)
    return True


def _as_float64(x: Any) -> Tensor:
    if isinstance(x, Tensor) and x.requires_grad and x.dtype == np.float64:
        return x  # used as is, so a layer's own parameters can be checked in place
    requires = isinstance(x, Tensor) and x.requires_grad
    data = np.array(x.array if isinstance(x, Tensor) else x)
    if data.dtype.kind == "f":
        data = data.astype(np.float64)
    return Tensor(data, requires_grad=requires)


def _outputs(y: Any) -> list[Tensor]:
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _compare(i: int, x: Tensor, objective: Callable[[], float], eps: float, atol: float,
             rtol: float) -> None:
    analytic = np.zeros(x.shape) if x.grad is None else np.asarray(x.grad, dtype=np.float64)
    numeric = np.zeros(x.shape)
    flat = x.array.reshape(-1)  # a view: writes below perturb x itself
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + eps
        up = objective()
        flat[j] = old - eps
        down = objective()
        flat[j] = old
        numeric.reshape(-1)[j] = (up - down) / (2 * eps)
    bad = np.abs(analytic - numeric) > atol + rtol * np.abs(numeric)
    if bad.any():
        j = np.unravel_index(int(np.argmax(bad)), x.shape) if x.ndim else ()
        raise GradcheckError(
            f"gradcheck: input {i} (shape {tuple(x.shape)}) element {tuple(int(k) for k in j)}: "
            f"analytic {analytic[j]:.8g}, numeric {numeric[j]:.8g} "
            f"({int(bad.sum())} of {bad.size} elements disagree)"
        )
