"""`lamina.autograd.functional`, PyTorch's: vjp, jvp and jacobian of a function of
tensors, from reverse-mode backward passes (a Jacobian row per output element).

lamina's gradients are not themselves differentiable (no double backward), so the
second-order functions (hessian, hvp, vhp) and create_graph=True raise, saying so.

    >>> from lamina.autograd.functional import jacobian
    >>> jacobian(lambda x: x.sum(), lm.ones(2))
    tensor([1., 1.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina.autograd.engine import grad
from lamina.autograd.tensor import Tensor


def _as_tuple(x: Any) -> tuple[bool, tuple[Tensor, ...]]:
    return (True, tuple(x)) if isinstance(x, (tuple, list)) else (False, (x,))


def _fresh(inputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """Leaves of the inputs' values that require grad: the function is differentiated with
    respect to these, whatever graph the inputs came from."""
    return tuple(t.detach().requires_grad_(True) for t in inputs)


def _no_second_order(name: str, create_graph: bool) -> None:
    if create_graph:
        raise NotImplementedError(
            f"autograd.functional.{name}(create_graph=True): lamina's gradients are not "
            "themselves differentiable (no double backward)")


def _run(func: Callable[..., Any], inputs: Any) -> tuple[bool, tuple[Tensor, ...], bool,
                                                         tuple[Tensor, ...]]:
    in_tuple, ins = _as_tuple(inputs)
    ins = _fresh(ins)
    out_tuple, outs = _as_tuple(func(*ins))
    return in_tuple, ins, out_tuple, outs


def _grads(outs: tuple[Tensor, ...], ins: tuple[Tensor, ...], vs: tuple[Any, ...],
           retain: bool) -> tuple[Tensor, ...]:
    wanted = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not wanted:
        return tuple(t.new_zeros(*t.shape) for t in ins)
    got = grad([o for o, _ in wanted], list(ins), [v for _, v in wanted],
               retain_graph=retain, allow_unused=True)
    return tuple(t.new_zeros(*t.shape) if g is None else g for g, t in zip(got, ins))


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product, v shaped as the output (None
    for a one-element output).

    Examples:
        >>> out, g = lm.autograd.functional.vjp(lambda x: (x * x).sum(), lm.tensor([1.0, 2.0]))
        >>> g
        tensor([2., 4.])
    """
    _no_second_order("vjp", create_graph)
    in_tuple, ins, out_tuple, outs = _run(func, inputs)
    _, vs = _as_tuple(v) if v is not None else (False, (None,) * len(outs))
    grads = _grads(outs, ins, vs, retain=False)
    detached = tuple(o.detach() for o in outs)
    return (detached if out_tuple else detached[0]), (grads if in_tuple else grads[0])


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of func at inputs: for one input and one output, a tensor of shape
    output.shape + input.shape; tuples of them (per output, then per input) where either
    is a tuple, as PyTorch's.

    Examples:
        >>> lm.autograd.functional.jacobian(lambda x: x * 2, lm.tensor([1.0, 3.0]))
        tensor([[2., 0.],
                [0., 2.]])
    """
    _no_second_order("jacobian", create_graph)
    in_tuple, ins, out_tuple, outs = _run(func, inputs)
    table = []
    for o in outs:
        rows = [[] for _ in ins]
        for k in range(o.numel()):
            seed = np.zeros(o.numel(), o.detach().numpy().dtype)
            seed[k] = 1
            grads = _grads((o,), ins, (Tensor(seed.reshape(o.shape)),), retain=True)
            for r, g in zip(rows, grads):
                r.append(g.detach().numpy())
        table.append(tuple(
            Tensor(np.stack(r).reshape(*o.shape, *t.shape) if r else
                   np.zeros((*o.shape, *t.shape), t.detach().numpy().dtype))
            for r, t in zip(rows, ins)))
    per_output = [row if in_tuple else row[0] for row in table]
    return tuple(per_output) if out_tuple else per_output[0]


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, v shaped as the inputs (None for
    a one-element input), from the Jacobian's rows.

    Examples:
        >>> out, t = lm.autograd.functional.jvp(lambda x: x * 3, lm.tensor([1.0, 2.0]),
        ...                                     lm.tensor([1.0, 0.0]))
        >>> t
        tensor([3., 0.])
    """
    _no_second_order("jvp", create_graph)
    in_tuple, ins = _as_tuple(inputs)
    _, vs = _as_tuple(v) if v is not None else (False, tuple(t.new_ones(*t.shape) for t in ins))
    jac = jacobian(lambda *xs: func(*xs), tuple(ins))
    out_tuple, outs = _as_tuple(func(*[t.detach() for t in ins]))
    rows = jac if out_tuple else (jac,)
    products = []
    for o, row in zip(outs, rows):
        total = np.zeros(tuple(o.shape), o.detach().numpy().dtype)
        for j, t, vv in zip(row, ins, vs):
            flat = j.numpy().reshape(o.numel(), t.numel())
            vec = np.asarray(vv.detach().numpy() if isinstance(vv, Tensor) else vv)
            total = total + (flat @ vec.reshape(-1)).reshape(tuple(o.shape))
        products.append(Tensor(total))
    detached = tuple(o.detach() for o in outs)
    return ((detached, tuple(products)) if out_tuple else (detached[0], products[0]))


def _second_order(name: str) -> Callable[..., Any]:
    def function(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"autograd.functional.{name}: second derivatives need double backward, which "
            "lamina does not have (its gradients are not themselves differentiable)")
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"PyTorch's {name}: raises NotImplementedError (lamina has no double "
                        f"backward).\n\nExamples:\n    >>> lm.autograd.functional.{name}"
                        f"  # doctest: +ELLIPSIS\n    <function {name} at ...>")
    return function


hessian, hvp, vhp = (_second_order(n) for n in ("hessian", "hvp", "vhp"))

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
