"""An op's input kept as its place in the graph, without its data.

A recorded op keeps its inputs for the backward walk: where each input's gradient goes
next (the op that made it, and which of its outputs), and its shape and dtype, which the
gradient must match. Most ops also need some inputs' values, and keep those arrays
(`save_for_backward`). An op whose backward reads none of an input's values (an addition;
a ReLU, which keeps its output) would still hold that input's array through the whole
forward and backward, were the input kept whole: a ResNet's batch-norm outputs and
residual sums, which PyTorch frees as soon as the next op has read them. Such an op sets
`Function.keeps_inputs = False`; `apply` then keeps, in place of each input made by another
op whose array it did not save, a `place`: a Tensor with that input's place in the graph
and a stand-in array that has a shape and a dtype, and no values.
"""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor


class Freed:
    """The stand-in array of a place: its shape and dtype only. Reading values from it
    fails, saying why."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "autograd: this input's values were freed after the forward pass: the op that "
            "read it declared (keeps_inputs = False) that its backward needs none of them. "
            "An op whose backward reads an input must save it (save_for_backward) or keep "
            "keeps_inputs = True")


def place(x: Tensor) -> Tensor:
    """x's place in the graph: x's creator, output slot, generation and requires_grad as
    they are now, its array a Freed of its shape and dtype. Later in-place writes to x
    move x, not its place: edges stay as the op read them, as `backward_call.edge` finds
    them for a kept input."""
    t = object.__new__(Tensor)
    t.array = Freed(x.array.shape, x.array.dtype)
    t._grad = None
    t.creator = x.creator
    t.generation = x.generation
    t.output_index = x.output_index
    t.name = None
    t._vc = None
    t._extra = None
    t._requires_grad = x._requires_grad
    return t


def places(xs: tuple[Tensor, ...], saved_mask: int) -> tuple[Tensor, ...]:
    """The inputs an op keeps: those it saved (a bit each in saved_mask) and the leaves
    whole, every other input made by an op as its place."""
    return tuple([x if x.creator is None or saved_mask >> i & 1 else place(x)
                  for i, x in enumerate(xs)])
