"""Backward with `create_graph=True`: gradients that are themselves recorded, so they can
be differentiated again (a gradient penalty, a Hessian-vector product, MAML's inner step).

An op's `backward` works on arrays and records nothing. For a second derivative the
engine instead asks the op's *derivative rule* (registered with `derivative`) for its
input gradients, written with lamina's own differentiable ops on the op's input tensors:
the gradient's graph links back to the first graph, as PyTorch's double backward does.

Ops without a rule still give the right gradients: their array `backward` runs and its
results enter the graph through `Opaque`, an op whose own backward raises, naming the op.
So a first derivative taken with create_graph=True never fails; only differentiating it
again through such an op does, as PyTorch reports a missing double backward.

A linear op (reshape, transpose, indexing, concat, padding) marks itself with
`linear_op`: its backward is its adjoint, and the adjoint's adjoint is the op itself, so
`Adjoint` and `Reapply` answer each other's gradients to any order without a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina import state
from lamina.autograd import complex_rules
from lamina.autograd.function import Function, OpName
from lamina.autograd.tensor import Tensor

Rule = Callable[..., tuple[Any, ...]]
RULES: dict[type, Rule] = {}


def derivative(*ops: type) -> Callable[[Rule], Rule]:
    """Register `rule(f, *grad_outputs)` as the differentiable backward of the op classes
    `ops`, exactly: a subclass (attention's softmax) may compute otherwise. The
    grad_outputs are Tensors; the rule returns one Tensor (or None where
    `f.needs_input_grad` is False) per input of f, computed from `f.inputs` with
    lamina's ops."""
    def register(rule: Rule) -> Rule:
        for op in ops:
            RULES[op] = rule
        return rule
    return register


def linear_op(*ops: type) -> None:
    """Mark ops as linear in their inputs, with a backward that reads no input array: the
    transpose of a linear map; `Adjoint` and `Reapply` differentiate them. Such an op
    keeps its inputs as their places in the graph (`Function.keeps_inputs`): a copy's
    input (`contiguous`, a cast, a concatenation's parts) is freed once read."""
    for op in ops:
        RULES[op] = adjoint
        op.keeps_inputs = False


def output(f: Function, array: Any, index: int = 0) -> Tensor:
    """f's output `index` as a Tensor in its place in the graph, its values the `array`
    f saved: a rule differentiates through it as through the output itself (PyTorch's
    saved `result`), so an op whose rule reads only its output (softmax) need not keep
    its input's array (`Function.keeps_inputs`). The graph stays, as create_graph keeps
    it: a gradient reaching this Tensor goes on through f's own backward."""
    return Tensor._from_op(array, f, f.generation + 1, index)


def call_backward(f: Function, gys: list[Any]) -> tuple[Any, ...]:
    """f's input gradients as recorded Tensors, from its output gradients (Tensors)."""
    for i, gy in enumerate(gys):
        if gy is None:  # an output nobody used: zeros, as the array walk gives it
            gys[i] = Tensor(np.zeros(*f.output_meta[i]))
    if complex_rules.ran_on_complex(f):
        raise complex_rules.refuse_double_backward(f)
    rule = RULES.get(type(f))
    previous = state.grad_enabled
    state.grad_enabled = True
    try:
        gxs = rule(f, *gys) if rule is not None else opaque(f, gys)
    finally:
        state.grad_enabled = previous
    return _tuple(gxs)


class Opaque(Function):
    """The gradients op `f`'s array backward made, entering the graph as outputs of an op
    whose inputs are f's output gradients and f's inputs. They are right; their own
    gradient is not known, and asking for it raises, naming f (or saying `why`)."""

    def __init__(self, f: Function, arrays: list[Any], why: str | None = None) -> None:
        self.op, self.arrays, self.why = f.name, arrays, why

    def forward(self, *inputs: Any) -> Any:
        return tuple(self.arrays) if len(self.arrays) > 1 else self.arrays[0]

    def backward(self, *grads: Any) -> Any:
        if self.why is not None:
            raise RuntimeError(self.why)
        raise NotImplementedError(
            f"double backward through {self.op}: lamina has no differentiable gradient for "
            f"{self.op} yet, so its gradient taken with create_graph=True cannot be "
            "differentiated again; the first gradient itself is right. Ops with one: "
            "lamina.autograd.higher_order.RULES"
        )

    @property
    def name(self) -> Any:
        return OpName(f"{self.op}Backward")


def opaque(f: Function, gys: list[Tensor], why: str | None = None) -> tuple[Any, ...]:
    """f's input gradients from its array backward, in the graph through `Opaque`."""
    gxs = _tuple(f.backward(*[g.array for g in gys]))
    made = [i for i, g in enumerate(gxs) if g is not None]
    if not made:
        return gxs
    outs = Opaque(f, [np.asarray(gxs[i]) for i in made], why).apply(*gys, *f.inputs)
    return placed(len(gxs), made, _tuple(outs))


class Adjoint(Function):
    """The backward of a linear op `f` as an op of its own: forward is f's backward (the
    transpose of f's map), so its backward is f's forward again (Reapply)."""

    def __init__(self, f: Function) -> None:
        self.f = f

    def forward(self, *gys: Any) -> Any:
        gxs = _tuple(self.f.backward(*gys))
        # Only the linear inputs (f's first ones) are outputs here: index tensors get None.
        self.made = [i for i, g in enumerate(gxs) if g is not None]
        outs = tuple(np.ascontiguousarray(gxs[i]) for i in self.made)
        return outs if len(outs) > 1 else outs[0]

    def backward(self, *ggs: Any) -> Any:
        return _reforward(self.f, self.made, ggs)


class Reapply(Function):
    """A linear op `f` run again on new inputs (the gradients of its gradients): its
    backward is f's backward."""

    def __init__(self, f: Function, made: list[int]) -> None:
        self.f, self.made = f, made

    def forward(self, *xs: Any) -> Any:
        return _reforward(self.f, self.made, xs)

    def backward(self, *gys: Any) -> Any:
        gxs = _tuple(self.f.backward(*gys))
        return tuple(gxs[i] for i in self.made)


def _reforward(f: Function, made: list[int], xs: tuple[Any, ...]) -> Any:
    """f's forward on new arrays in the places `made`, its other inputs (index arrays) as
    they were. Linear ops keep nothing but shapes and indices, which stay the same."""
    args = [x.array for x in f.inputs]
    for i, x in zip(made, xs):
        args[i] = np.asarray(x, args[i].dtype)
    saved = f.saved_tensors
    ys = f.forward(*args)
    f.saved_tensors = saved
    return ys


def adjoint(f: Function, *gys: Tensor) -> tuple[Any, ...]:
    """The rule of a linear op (see `linear_op`): its backward as the op `Adjoint`."""
    op = Adjoint(f)
    outs = _tuple(op.apply(*gys))
    return placed(len(f.inputs), op.made, outs)


def _adjoint_of_adjoint(f: Adjoint, *ggs: Tensor) -> tuple[Any, ...]:
    return _tuple(Reapply(f.f, f.made).apply(*ggs))


def _reapply_rule(f: Reapply, *gys: Tensor) -> tuple[Any, ...]:
    return _tuple(Adjoint(f.f).apply(*gys))


def _tuple(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def placed(n: int, where: list[int], values: Any) -> tuple[Any, ...]:
    """n gradients, `values` at the places `where`, None elsewhere (inputs that take
    none)."""
    result: list[Any] = [None] * n
    for i, v in zip(where, values):
        result[i] = v
    return tuple(result)


RULES[Adjoint] = _adjoint_of_adjoint
RULES[Reapply] = _reapply_rule
