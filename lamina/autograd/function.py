"""`Function`: one differentiable op, with `forward` and `backward` on backend arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, state
from lamina.autograd import complex_rules
from lamina.autograd.place import places
from lamina.autograd.tensor import Tensor

# lamina's op classes whose PyTorch graph node is named otherwise (Linear runs as addmm)
_TORCH_NODE = {"PowScalar": "Pow", "ReLU": "Relu", "Reshape": "View", "MatMul": "Mm",
               "Linear": "Addmm", "GetItem": "Index", "CrossEntropy": "NllLoss",
               "Concat": "Cat", "Extremum": "Max", "GELU": "Gelu", "BroadcastTo": "Expand",
               "AsType": "ToCopy"}


class OpName(str):
    """An op's name ("Mul", in lamina's messages); called, PyTorch's name of its graph
    node ("MulBackward0"), as `y.grad_fn.name()` answers.

    Examples:
        >>> f = (lm.ones(1, requires_grad=True) * 2).grad_fn
        >>> f.name, f.name()
        ('Mul', 'MulBackward0')
    """

    def __call__(self) -> str:
        return f"{_TORCH_NODE.get(self, self)}Backward0"


class Function:
    """Base class of every differentiable op.

    A subclass implements `forward(self, *arrays)` and `backward(self, *grad_outputs)` on
    backend arrays (NumPy or CuPy), side by side. `forward` keeps what `backward` needs,
    either with `save_for_backward` or as attributes, and may consult `needs_input_grad`
    to skip saving what no gradient will use. `backward` returns one gradient per input
    (None where `needs_input_grad` is False), each with its input's shape and dtype.

    Call an op through `apply`, which wraps the arrays in tensors and links the graph:

        >>> class Square(lm.Function):
        ...     def forward(self, x):
        ...         self.save_for_backward(x)
        ...         return x * x
        ...     def backward(self, gy):
        ...         (x,) = self.saved_tensors
        ...         return 2 * x * gy
        >>> y = Square().apply(lm.tensor([3.0], requires_grad=True))

    After `backward` has run through a Function its inputs and saved arrays are dropped
    (unless `retain_graph=True`), so the memory they held is freed at once.
    """

    generation: int = 0
    n_outputs: int = 1
    released: bool = False
    saved_tensors: tuple[Any, ...] = ()
    # Which inputs (a bit each; `saved_at`: (position, version) where the version was not 0)
    # and outputs (their version counters) forward saved: backward checks that none was
    # changed in place in between.
    saved_mask: int = 0
    saved_at: tuple[int, ...] = ()
    saved_outputs: tuple[list[int], ...] = ()
    # False where backward, and the op's derivative rule under create_graph, read no input's
    # values beyond what forward saved: the inputs other ops made are then kept as their
    # places in the graph, and their arrays freed when nothing else holds them
    # (lamina/autograd/place.py).
    keeps_inputs: bool = True
    # How backward treats complex operands (lamina/autograd/complex_rules.py): None
    # refuses them; "holomorphic" conjugates around the array backward; "own" computes
    # PyTorch's rule itself. complex_mode: set on an op that ran on complex values.
    complex_rule: str | None = None
    complex_mode: tuple[bool, ...] | None = None

    @property
    def name(self) -> OpName:
        """The op's name, used in error messages; `name()` gives PyTorch's node name."""
        return OpName(type(self).__name__)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """Where each input's gradient goes next, PyTorch's graph walk: (the op that made
        it, which of its outputs) for an op's output, (an AccumulateGrad holding it as
        `variable`) for a leaf that requires grad, (None, 0) otherwise. Empty once
        backward has freed this op's inputs (PyTorch keeps the graph's shape).

        Examples:
            >>> x = lm.ones(2, requires_grad=True)
            >>> [type(f).__name__ for f, _ in ((x * 2).sum().grad_fn.next_functions)]
            ['Mul']
        """
        nexts = []
        for x in vars(self).get("inputs", ()):
            if x.creator is not None:
                nexts.append((x.creator, x.output_index))
            else:
                nexts.append((AccumulateGrad(x) if x.requires_grad else None, 0))
        return tuple(nexts)

    def save_for_backward(self, *arrays: Any) -> None:
        """Keep arrays for `backward`; they are released once backward has used them.

        Every input or output array an op keeps past `forward` (or a view of one) must be
        among them: that is how the version check here, and an execution plan's liveness,
        know what backward will read."""
        self.saved_tensors = arrays

    def forward(self, *arrays: Any) -> Any:
        """Compute the outputs from the input arrays; keep what backward needs."""
        raise NotImplementedError(f"{self.name}.forward is not implemented")

    def backward(self, *grad_outputs: Any) -> Any:
        """Gradients of the inputs, one per input (None where not needed), from the outputs'."""
        raise NotImplementedError(f"{self.name}.backward is not implemented")

    def apply(self, *inputs: Any) -> Any:
        """Run `forward` on the inputs' arrays; return a Tensor (or a tuple of them)."""
        xs = inputs
        if not all([isinstance(x, Tensor) for x in inputs]):
            xs = tuple(x if isinstance(x, Tensor) else Tensor(dtypes.as_array(x)) for x in inputs)
        needs = tuple([x._requires_grad for x in xs])
        record = state.grad_enabled and True in needs
        self.needs_input_grad = needs if record else (False,) * len(xs)
        complex_in = state.complex_seen and complex_rules.check_inputs(self, xs)
        if state.profiler is None:
            ys = self.forward(*[x.array for x in xs])
        else:
            ys = state.profiler.run(self.name, self.forward, [x.array for x in xs])
        # NumPy returns a scalar, not a 0-d array, from a reduction or a ufunc on 0-d arrays;
        # a Tensor's data is always an array (so `t.array[...] = v` works on a loss too).
        one = type(ys) is np.ndarray
        if not one:
            ys = _no_scalars(ys)
        if state.complex_seen:
            complex_rules.check_outputs(self, xs, ys, complex_in)
        if not record:
            outs = tuple(Tensor(y) for y in ys) if isinstance(ys, tuple) else Tensor(ys)
        else:
            self.inputs = xs
            self.seq = next(state.op_counter)
            self.generation = gen = max([x.generation for x in xs])
            if isinstance(ys, tuple):
                # The engine feeds zeros to outputs that received no gradient: keep shapes.
                self.n_outputs = len(ys)
                self.output_meta = tuple((y.shape, y.dtype) for y in ys)
                outs = tuple(Tensor._from_op(y, self, gen + 1, i) for i, y in enumerate(ys))
            else:
                outs = Tensor._from_op(ys, self, gen + 1, 0)
            if self.saved_tensors:
                self._note_versions(xs, outs)
            if not self.keeps_inputs:
                self.inputs = places(xs, self.saved_mask)
            if state.anomaly:
                from lamina.autograd.anomaly import forward_trace

                self.forward_trace = forward_trace()
        if not one or (ys.ndim > 1 and not ys.flags.c_contiguous):  # see note_layouts
            note_layouts(outs, xs)
        if state.tracer is not None:
            state.tracer.record(self, xs, outs)
        return outs

    def _note_versions(self, xs: tuple[Tensor, ...], outs: Any) -> None:
        """Remember which inputs' and outputs' arrays forward saved, for backward to check
        that none was changed in place since: a bit per input (with its version where not
        0) and the version counters of saved outputs. Ints, not containers: the garbage
        collector walks every container a graph holds."""
        mask, at, outputs = 0, (), ()
        for s in self.saved_tensors:
            if s is None:
                continue
            for i, x in enumerate(xs):
                if s is x.array:
                    mask |= 1 << i
                    if x._vc is not None and x._vc[0]:
                        at += (i, x._vc[0])
                    break
            else:
                for y in outs if type(outs) is tuple else (outs,):
                    if s is y.array:
                        outputs += (y._counter(),)
                        break
        if mask:
            self.saved_mask = mask
        if at:
            self.saved_at = at
        if outputs:
            self.saved_outputs = outputs

    def release(self) -> None:
        """Drop inputs, saved arrays and every attribute forward kept: frees their memory."""
        self.__dict__.clear()
        self.released = True

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


def once_differentiable(backward: Any) -> Any:
    """Mark a custom autograd.Function's backward as not differentiable, as PyTorch's
    decorator does: under create_graph=True it runs on the arrays, and differentiating
    its result again raises.

    Examples:
        >>> class Cube(lm.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     @lm.autograd.function.once_differentiable
        ...     def backward(ctx, g):
        ...         return 3 * ctx.saved_tensors[0] ** 2 * g
        >>> x = lm.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).backward(); x.grad
        tensor([12.])
    """
    backward.once_differentiable = True
    return backward


class AccumulateGrad:
    """A leaf's end of the graph in `next_functions`, as PyTorch's: `variable` is the leaf,
    whose .grad backward accumulates into."""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def note_layouts(outs: Any, xs: tuple[Tensor, ...]) -> None:
    """Mark each output whose memory order lamina chose (see Tensor._layout_chosen): one
    not in row-major order, in memory of its own (a convolution's channel-major output,
    what elementwise ops make of it), or viewing an input that was so marked. A view of
    any other input is strided as the user asked (a transpose), as PyTorch's would be."""
    for y in outs if type(outs) is tuple else (outs,):
        a = y.array
        if a.ndim < 2 or a.flags.c_contiguous:
            continue
        base = a if a.base is None else a.base
        for x in xs:
            if base is x.array or base is x.array.base:
                if x._layout_chosen:
                    y._extras()["layout_chosen"] = True
                break
        else:
            y._extras()["layout_chosen"] = True


def _no_scalars(ys: Any) -> Any:
    """ys (an array or a tuple of them) with every NumPy scalar made a 0-d array."""
    if isinstance(ys, tuple):
        return tuple([np.asarray(y) if isinstance(y, np.generic) else y for y in ys])
    return np.asarray(ys) if isinstance(ys, np.generic) else ys


def check_versions(f: Function) -> None:
    """Refuse to run backward on arrays changed in place since the op saved them."""
    mask, i = f.saved_mask, 0
    while mask:
        vc = f.inputs[i]._vc if mask & 1 else None
        if vc is not None:  # None: never written nor viewed, so unchanged
            at = f.saved_at
            noted = next((at[k + 1] for k in range(0, len(at), 2) if at[k] == i), 0)
            if vc[0] != noted:
                _changed(f, f"input {i} (shape {tuple(f.inputs[i].shape)})", vc[0], noted)
        mask >>= 1
        i += 1
    for vc in f.saved_outputs:
        if vc[0] != 0:
            _changed(f, "an output", vc[0], 0)


def _changed(f: Function, what: str, now: int, then: int) -> None:
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {what} of {f.name} is at version {now}; expected version "
        f"{then} instead. Use the out-of-place op (x = x + y, not x += y), or .clone() the "
        f"tensor before changing it"
    )
