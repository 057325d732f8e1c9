"""Custom ops written PyTorch's way: a `lamina.autograd.Function` subclass with static
`forward(ctx, ...)` and `backward(ctx, ...)` on Tensors, called through `apply`.

It runs on lamina's own op machinery (`lamina.Function`, which works on arrays): `apply`
wraps the user's two static methods in one op, so the engine, version checks and plans
treat it like any built-in op.
"""

from __future__ import annotations

from typing import Any

from lamina.autograd import higher_order
from lamina.autograd.function import Function as _Op
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.higher_order import derivative
from lamina.autograd.tensor import Tensor


class FunctionCtx:
    """What `forward` hands to `backward`: saved tensors and any attributes set on it.

    Examples:
        >>> ctx = lm.autograd.FunctionCtx((True,))
        >>> ctx.save_for_backward(lm.ones(1)); len(ctx.saved_tensors)
        1
    """

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.to_save: tuple[Any, ...] = ()
        self.materialize_grads = True
        self.non_differentiable: set[int] = set()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors (or None) for backward; read them back as `ctx.saved_tensors`."""
        self.to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        return self.to_save

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Outputs (of forward) that take no gradient: they come out not requiring grad,
        and backward gets zeros for them, as in PyTorch. Integer and boolean outputs are
        so without being marked."""
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        """Accepted for PyTorch's API."""

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class _CustomOp(_Op):
    """One call of a user's autograd.Function, as an op on arrays."""

    # A user's backward takes and gives PyTorch's complex gradients itself, as there.
    complex_rule = "own"

    def __init__(self, fn: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any],
                 positions: list[int]) -> None:
        self.fn, self.args, self.kwargs, self.positions = fn, args, kwargs, positions

    @property
    def name(self) -> str:
        return self.fn.__name__

    def forward(self, *arrays: Any) -> Any:
        needs = [False] * len(self.args)
        for p, need in zip(self.positions, self.needs_input_grad):
            needs[p] = need
        self.ctx = FunctionCtx(tuple(needs))
        with no_grad():
            if self.fn.setup_context is Function.setup_context:
                out = self.fn.forward(self.ctx, *self.args, **self.kwargs)
            else:  # PyTorch's newer form: forward without ctx, then setup_context
                out = self.fn.forward(*self.args, **self.kwargs)
                self.fn.setup_context(self.ctx, self.args, out)
        self.args = None  # the inputs stay reachable through ctx only where saved
        self.single = not isinstance(out, tuple)
        outs = (out,) if self.single else out
        # Saved outputs, by place: a differentiable backward (create_graph) reads them as
        # this op's outputs, in the graph, as PyTorch's saved variables are.
        self.saved_outputs_at = {i: k for i, s in enumerate(self.ctx.to_save)
                                 for k, o in enumerate(outs) if s is o}
        self.out_meta = [(o.shape, o.dtype) for o in outs]
        self.constant_outputs = [k for k, o in enumerate(outs)
                                 if id(o) in self.ctx.non_differentiable
                                 or isinstance(o, Tensor) and o.dtype.kind not in "fc"]
        arrays = tuple(o.array if isinstance(o, Tensor) else o for o in outs)
        return arrays[0] if self.single else arrays

    def backward(self, *gys: Any) -> tuple[Any, ...]:
        # Grad mode off, as in PyTorch's backward without create_graph: the user's ops
        # record nothing, and is_grad_enabled() tells the two kinds of backward apart.
        with no_grad():
            grads = self.fn.backward(self.ctx, *[Tensor(g) for g in gys])
        return self.per_input(grads, lambda g: g.array if isinstance(g, Tensor) else g)

    def per_input(self, grads: Any, kind: Any) -> tuple[Any, ...]:
        """The user's backward's results, one per tensor input of the op (None where none
        is needed), each made by `kind` (an array, or a Tensor under create_graph)."""
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) < max(self.positions) + 1:
            raise RuntimeError(
                f"function {self.name}Backward returned an incorrect number of gradients "
                f"(expected one per forward argument, {max(self.positions) + 1} at least, got "
                f"{len(grads)})")
        return tuple(None if not need or grads[p] is None else kind(grads[p])
                     for p, need in zip(self.positions, self.needs_input_grad))


@derivative(_CustomOp)
def _differentiable_backward(op: _CustomOp, *gys: Tensor) -> tuple[Any, ...]:
    """The user's backward run in grad mode on recorded gradients: written with lamina's
    ops, it is differentiable as it stands (PyTorch's double backward of a custom
    Function). Saved inputs are the input tensors themselves; saved outputs are rebuilt as
    this op's outputs, so the graph runs through them too."""
    if getattr(op.fn.backward, "once_differentiable", False):
        if not any(g.requires_grad for g in gys):  # as PyTorch's: constants, no graph
            grads = op.backward(*[g.array for g in gys])
            return tuple(None if g is None else Tensor(g) for g in grads)
        return higher_order.opaque(op, list(gys), "trying to differentiate twice a function "
                                   "that was marked with @once_differentiable")
    ctx, saved = op.ctx, op.ctx.to_save
    ctx.to_save = tuple(
        Tensor._from_op(s.array, op, op.generation + 1, op.saved_outputs_at[i])
        if i in op.saved_outputs_at else s for i, s in enumerate(saved))
    try:
        grads = op.fn.backward(ctx, *gys)
    finally:
        ctx.to_save = saved
    return op.per_input(grads, lambda g: g if isinstance(g, Tensor) else Tensor(g))


class Function:
    """Base class of a custom op written PyTorch's way.

    Examples:
        >>> class Exp(lm.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         y = x.exp()
        ...         ctx.save_for_backward(y)
        ...         return y
        ...     @staticmethod
        ...     def backward(ctx, gy):
        ...         (y,) = ctx.saved_tensors
        ...         return gy * y
        >>> y = Exp.apply(lm.tensor([1.0], requires_grad=True))
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("autograd.Function: define a static backward(ctx, ...)")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> Any:
        """PyTorch's newer form: a subclass defining it writes forward without ctx
        (`forward(x)`) and saves what backward needs here, from the inputs and the output.

        Examples:
            >>> class Square(lm.autograd.Function):
            ...     @staticmethod
            ...     def forward(x):
            ...         return x * x
            ...     @staticmethod
            ...     def setup_context(ctx, inputs, output):
            ...         ctx.save_for_backward(inputs[0])
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         return 2 * ctx.saved_tensors[0] * g
            >>> x = lm.tensor([3.0], requires_grad=True)
            >>> Square.apply(x).sum().backward(); x.grad
            tensor([6.])
        """

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward on the arguments and link the result into the graph."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not positions:
            with no_grad():
                if cls.setup_context is not Function.setup_context:
                    return cls.forward(*args, **kwargs)
                return cls.forward(FunctionCtx(()), *args, **kwargs)
        op = _CustomOp(cls, args, kwargs, positions)
        out = op.apply(*[args[i] for i in positions])
        if not getattr(op, "constant_outputs", None):
            return out
        if not isinstance(out, tuple):
            return out.detach()
        return tuple(o.detach() if k in op.constant_outputs else o for k, o in enumerate(out))
