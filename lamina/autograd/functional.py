"""`lamina.autograd.functional`, PyTorch's: vjp, jvp, jacobian, hessian, vhp and hvp of
a function of tensors, from reverse-mode backward passes (a Jacobian row per output
element); the second-order ones differentiate gradients taken with create_graph=True
(lamina.autograd.higher_order). With create_graph=True the results stay differentiable
with respect to the inputs.

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


def _fresh(inputs: tuple[Tensor, ...], create_graph: bool = False) -> tuple[Tensor, ...]:
    """The inputs as tensors to differentiate with respect to: new leaves of their values,
    or, with create_graph, views that keep an input's own graph (PyTorch's way), so that
    the results can be differentiated with respect to the inputs."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(True) for t in inputs)


def _run(func: Callable[..., Any], inputs: Any, create_graph: bool = False
         ) -> tuple[bool, tuple[Tensor, ...], bool, tuple[Tensor, ...]]:
    in_tuple, ins = _as_tuple(inputs)
    ins = _fresh(ins, create_graph)
    out_tuple, outs = _as_tuple(func(*ins))
    return in_tuple, ins, out_tuple, outs


def _grads(outs: tuple[Tensor, ...], ins: tuple[Tensor, ...], vs: tuple[Any, ...],
           retain: bool, create_graph: bool = False) -> tuple[Tensor, ...]:
    wanted = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
    if not wanted:
        return tuple(t.new_zeros(*t.shape) for t in ins)
    got = grad([o for o, _ in wanted], list(ins), [v for _, v in wanted],
               retain_graph=retain or create_graph, create_graph=create_graph,
               allow_unused=True)
    return tuple(t.new_zeros(*t.shape) if g is None else g for g, t in zip(got, ins))


def _out(ts: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Results as PyTorch returns them: detached unless create_graph."""
    return ts if create_graph else tuple(t.detach() for t in ts)


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product, v shaped as the output (None
    for a one-element output).

    Examples:
        >>> out, g = lm.autograd.functional.vjp(lambda x: (x * x).sum(), lm.tensor([1.0, 2.0]))
        >>> g
        tensor([2., 4.])
    """
    in_tuple, ins, out_tuple, outs = _run(func, inputs, create_graph)
    _, vs = _as_tuple(v) if v is not None else (False, (None,) * len(outs))
    grads = _out(_grads(outs, ins, vs, retain=False, create_graph=create_graph), create_graph)
    values = _out(outs, create_graph)
    return (values if out_tuple else values[0]), (grads if in_tuple else grads[0])


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
    in_tuple, ins, out_tuple, outs = _run(func, inputs, create_graph)
    table = []
    for o in outs:
        rows: list[list[Tensor]] = [[] for _ in ins]
        for k in range(o.numel()):
            seed = np.zeros(o.numel(), o.detach().numpy().dtype)
            seed[k] = 1
            grads = _grads((o,), ins, (Tensor(seed.reshape(o.shape)),), retain=True,
                           create_graph=create_graph)
            for r, g in zip(rows, _out(grads, create_graph)):
                r.append(g)
        table.append(tuple(
            _stacked(r, create_graph).reshape(*o.shape, *t.shape) if r else
            Tensor(np.zeros((*o.shape, *t.shape), t.detach().numpy().dtype))
            for r, t in zip(rows, ins)))
    per_output = [row if in_tuple else row[0] for row in table]
    return tuple(per_output) if out_tuple else per_output[0]


def _stacked(rows: list[Tensor], create_graph: bool) -> Tensor:
    """The rows stacked along a new first axis; with create_graph, as a recorded sum of
    each row put in its place (Tensor's operators alone: autograd sits below the ops
    module that has stack)."""
    if not create_graph:
        return Tensor(np.stack([r.detach().numpy() for r in rows]))
    total = None
    for k, r in enumerate(rows):
        place = np.zeros((len(rows),) + (1,) * r.ndim, r.detach().numpy().dtype)
        place[k] = 1
        term = r.reshape(1, *r.shape) * Tensor(place)
        total = term if total is None else total + term
    return total


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, v shaped as the inputs (None for
    a one-element input). Two backward passes, as PyTorch's: g(u) = J^T u taken with
    create_graph=True, then the gradient of g . v with respect to u is J v. Through an op
    with no differentiable backward, the product of the Jacobian's rows instead (one
    backward per output element), which create_graph=True cannot take.

    Examples:
        >>> out, t = lm.autograd.functional.jvp(lambda x: x * 3, lm.tensor([1.0, 2.0]),
        ...                                     lm.tensor([1.0, 0.0]))
        >>> t
        tensor([3., 0.])
    """
    in_tuple, ins = _as_tuple(inputs)
    _, vs = _as_tuple(v) if v is not None else (False, tuple(t.new_ones(*t.shape) for t in ins))
    try:
        out_tuple, outs, products = _jvp_by_double_vjp(func, ins, vs, create_graph)
    except NotImplementedError:
        if create_graph:
            raise
        out_tuple, outs, products = _jvp_by_jacobian(func, ins, vs)
    values, products = _out(outs, create_graph), _out(products, create_graph)
    return ((values, products) if out_tuple else (values[0], products[0]))


def _jvp_by_double_vjp(func: Callable[..., Any], ins: tuple[Tensor, ...], vs: Any,
                       create_graph: bool) -> tuple[bool, tuple[Tensor, ...], tuple[Tensor, ...]]:
    _, xs, out_tuple, outs = _run(func, ins, create_graph)
    _, push = pushforward(outs, xs)
    got = push(*vs, create_graph=create_graph)
    return out_tuple, outs, tuple(o.detach().new_zeros(*o.shape) if p is None else p
                                  for p, o in zip(got, outs))


def pushforward(outs: Any, xs: Any) -> tuple[bool, Callable[..., tuple[Any, ...]]]:
    """(whether any of xs reaches outs, push): push(*tangents) gives J t for each output,
    J its Jacobian in xs, by two reverse passes. u -> J^T u is recorded once (with
    create_graph=True, so through every op's derivative rule); each push takes its
    gradient in u along t. None for an output whose J t is zero (or that no x reaches).
    forward-mode jvp, func.linearize and forward_ad's tangents are this."""
    # J^T u is linear in u: any value of u gives the same derivative; zeros cost nothing.
    us = [Tensor(np.zeros(tuple(o.shape), o.detach().numpy().dtype), requires_grad=True)
          for o in outs]
    live = [(o, u) for o, u in zip(outs, us) if o.requires_grad]
    pulled = (grad([o for o, _ in live], list(xs), [u for _, u in live], retain_graph=True,
                   create_graph=True, allow_unused=True) if live else (None,) * len(xs))

    def push(*tangents: Any, create_graph: bool = False) -> tuple[Any, ...]:
        moving = [(g, t) for g, t in zip(pulled, tangents) if g is not None and g.requires_grad]
        if not moving:  # J^T u does not depend on u: J is zero
            return (None,) * len(us)
        return grad([g for g, _ in moving], us, [t for _, t in moving], retain_graph=True,
                    create_graph=create_graph, allow_unused=True)
    return any(g is not None for g in pulled), push


def _jvp_by_jacobian(func: Callable[..., Any], ins: tuple[Tensor, ...], vs: Any
                     ) -> tuple[bool, tuple[Tensor, ...], tuple[Tensor, ...]]:
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
    return out_tuple, outs, tuple(products)


def _scalar_output(name: str, out: Any) -> Tensor:
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError(f"autograd.functional.{name}: the function must return a "
                           "single-element Tensor")
    return out


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function with a one-element output: for one input, a tensor of
    shape input.shape + input.shape; for a tuple of inputs, a tuple of tuples (block
    i, j: d2 out / d input_i d input_j), as PyTorch's.

    Examples:
        >>> lm.autograd.functional.hessian(lambda x: (x ** 3).sum(), lm.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    in_tuple, _ = _as_tuple(inputs)

    def gradient(*xs: Tensor) -> Any:
        out = _scalar_output("hessian", func(*xs))
        gs = _grads((out,), xs, (None,), retain=True, create_graph=True)
        return gs if in_tuple else gs[0]
    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H): the vector-Hessian product of a function with a one-element
    output, v shaped as the inputs.

    Examples:
        >>> out, p = lm.autograd.functional.vhp(lambda x: (x ** 3).sum(),
        ...                                     lm.tensor([1.0, 2.0]), lm.tensor([1.0, 1.0]))
        >>> p
        tensor([ 6., 12.])
    """
    in_tuple, ins, _, outs = _run(func, inputs, create_graph)
    out = _scalar_output("vhp", outs[0])
    _, vs = _as_tuple(v) if v is not None else (False, (None,))
    gs = _grads((out,), ins, (None,), retain=True, create_graph=True)
    wanted = [(g, vv) for g, vv in zip(gs, vs) if g.requires_grad]
    if wanted:
        got = grad([g for g, _ in wanted], list(ins), [vv for _, vv in wanted],
                   create_graph=create_graph, allow_unused=True)
        products = tuple(t.new_zeros(*t.shape) if p is None else p for p, t in zip(got, ins))
    else:  # the gradient is a constant: the Hessian is zero
        products = tuple(t.new_zeros(*t.shape) for t in ins)
    products = _out(products, create_graph)
    value = out if create_graph else out.detach()
    return value, (products if in_tuple else products[0])


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v): the Hessian-vector product; the Hessian of a twice
    differentiable function is symmetric, so it equals vhp's v^T H.

    Examples:
        >>> out, p = lm.autograd.functional.hvp(lambda x: (x ** 3).sum(),
        ...                                     lm.tensor([1.0, 2.0]), lm.tensor([1.0, 0.0]))
        >>> p
        tensor([6., 0.])
    """
    return vhp(func, inputs, v, create_graph, strict)


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
