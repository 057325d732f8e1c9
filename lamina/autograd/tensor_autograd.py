"""Tensor methods for autograd and in-place writes: backward, hooks, retain_grad, detach,
and `_write` / `_inplace`, which keep PyTorch's rules for changing a tensor's memory
(version counters, no writes to a leaf that requires grad, the graph re-pointed)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import state

if TYPE_CHECKING:
    from lamina.autograd.tensor import Tensor


def _tensor_class() -> type[Tensor]:
    from lamina.autograd.tensor import Tensor

    return Tensor


class AutogradMethods:
    """backward, register_hook, retain_grad, detach, and the in-place write machinery."""

    __slots__ = ()

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        Args:
            gradient: dL/d(self), of self's shape; may be omitted only for one element.
            retain_graph: keep saved arrays so backward can run through the graph again.
            create_graph: record the gradients as ops, so that `.grad` can be
                differentiated again (lamina.autograd.higher_order).
            inputs: accumulate only into these tensors' `.grad`.

        Raises:
            RuntimeError: self is not scalar and no gradient is given, or the graph was
                freed, or an array an op saved was changed in place since.

        Examples:
            >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
            >>> (x ** 2).sum().backward()
            >>> x.grad
            tensor([2., 4.])
        """
        from lamina.autograd.engine import backward

        backward(self, gradient, bool(retain_graph), inputs=inputs, create_graph=create_graph)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> (x * 3).sum().backward(); x.zero_grad(); x.grad is None
            True
        """
        self._grad = None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` in place; returns self.

        Examples:
            >>> lm.zeros(2).requires_grad_().requires_grad
            True
        """
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in `.grad` after backward.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> h = x * 3; h.retain_grad(); (h * h).sum().backward()
            >>> h.grad
            tensor([6.])
        """
        if self.creator is None:
            return
        extra = self._extras()
        if not extra.get("retains_grad"):
            extra["retains_grad"] = True
            self._add_hook(_Retain(self))

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call `hook(grad)` when this tensor's gradient is computed; a returned Tensor
        replaces the gradient. Returns a handle whose `remove()` unregisters it.

        Examples:
            >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 2)   # doubles x's gradient
            >>> x.sum().backward(); x.grad
            tensor([2., 2.])
        """
        if not self._requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that "
                               "doesn't require gradient")
        return self._add_hook(hook)

    def _add_hook(self, hook: Any) -> Any:
        if self.creator is None:
            hooks = self._extras().setdefault("hooks", [])
        else:
            table = self.creator.__dict__.setdefault("tensor_hooks", {})
            hooks = table.setdefault(self.output_index, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's array and version counter, cut from the graph.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> (x * 2).detach().requires_grad
            False
        """
        out = _tensor_class()(self.array)._layout_from(self)
        out._vc = self._counter()
        return out

    @property
    def _layout_chosen(self) -> bool:
        """Whether lamina chose this tensor's memory order, which is not row-major: a
        convolution keeps its output channel-major, and the ops after it keep that
        order, where PyTorch's outputs are contiguous. `view` copies such a tensor where
        its memory cannot be viewed so, as PyTorch's contiguous one could be."""
        extra = self._extra
        return bool(extra) and extra.get("layout_chosen", False)

    def _layout_from(self, other: Tensor) -> Tensor:
        """This tensor, on other's array, marked as other is (see _layout_chosen)."""
        if other._layout_chosen:
            self._extras()["layout_chosen"] = True
        return self

    def copy(self) -> Tensor:
        """A new leaf with a copy of the array, requiring grad as this one does (lamina's
        name; PyTorch spells it `x.detach().clone()`).

        Examples:
            >>> x = lm.tensor([1.0])
            >>> y = x.copy(); y.add_(1); x
            tensor([2.])
            tensor([1.])
        """
        return _tensor_class()(self.array.copy(), requires_grad=self._requires_grad)

    def astype(self, dtype: Any) -> Tensor:
        """NumPy's name for `to(dtype)`.

        Examples:
            >>> lm.tensor([1.7]).astype('int64')
            tensor([1])
        """
        return self.to(dtype)

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place; returns self.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True) * 2
            >>> x.detach_().is_leaf
            True
        """
        self.creator = None
        self.generation = 0
        self._requires_grad = False
        return self


    def _write(self, result: Tensor) -> Tensor:
        """Make `result` (computed out of place) this tensor's value, in its own memory.

        PyTorch's in-place rules: a leaf that requires grad may not be written while grad
        mode is on; a write bumps the version counter shared with every view, so an op
        that saved this memory for backward fails loudly rather than use the new values.
        When the result is part of the graph, this tensor takes over its place there.
        """
        if state.grad_enabled and self.creator is None and self._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation; "
                "wrap the update in `with lamina.no_grad():` or use the out-of-place form"
            )
        arr = result.array
        if arr.shape != self.array.shape:
            raise RuntimeError(
                f"in-place op: the result of shape {tuple(arr.shape)} does not fit the "
                f"tensor's shape {tuple(self.shape)}"
            )
        if arr.dtype != self.array.dtype and not np.can_cast(arr.dtype, self.array.dtype,
                                                              "same_kind"):
            raise RuntimeError(
                f"in-place op: result type {arr.dtype} can't be cast to the desired output "
                f"type {self.array.dtype}"
            )
        if not self.array.flags.writeable:
            self.array = self.array.copy()
        np.copyto(self.array, arr, casting="unsafe")
        self._counter()[0] += 1
        return self._take_place(result)

    def _take_place(self, result: Tensor) -> Tensor:
        """Stand where `result` stands in the graph (after taking its value)."""
        if state.grad_enabled and result.creator is not None:
            if self.creator is not None:
                # ops that read this tensor before the write reach its old place in the
                # graph: the engine finds it here, by the op numbers
                extra = self._extras()
                extra["past"] = [*extra.get("past", ()), (next(state.op_counter), self.creator,
                                                          self.output_index, self.array.shape)]
            self.creator = result.creator
            self.generation = result.generation
            self.output_index = result.output_index
            self._requires_grad = True
        elif state.grad_enabled and self.creator is not None:
            # overwritten by constants: nothing of the old value reaches the result
            self.creator, self.generation, self._requires_grad = None, 0, False
        return self

    def _inplace(self, op: Callable[[Tensor], Tensor]) -> Tensor:
        """Apply `op` out of place and write its result into this tensor (`add_`, `x[i] = v`).

        While grad mode records, the op reads a copy that stands in this tensor's place in
        the graph, so an array the op saves for backward is never the one written over.
        """
        if not state.grad_enabled:
            return self._write(op(self))
        if self.creator is None and self._requires_grad:
            return self._write(self)  # raises: a leaf that requires grad
        return self._write(op(self._stand_in(self.array.copy())))

    def _inplace_view(self, op: Callable[[Tensor], Tensor]) -> Tensor:
        """Make this tensor `op(self)`, a view of its memory in another shape (PyTorch's
        `unsqueeze_`, `t_`, ...): its data stays, its shape and place in the graph change."""
        if state.grad_enabled and self.creator is None and self._requires_grad:
            return self._write(self)  # raises: a leaf that requires grad
        view = op(self._stand_in(self.array) if state.grad_enabled else self)
        self._take_place(view)  # first: the graph keeps the shape the earlier readers saw
        self.array = view.array
        return self

    def _stand_in(self, array: Any) -> Tensor:
        """A tensor of `array` in this tensor's place in the graph, for an op that is to
        become this tensor's new value: the op reads it, so the graph has no cycle."""
        stand_in = _tensor_class()._from_op(array, self.creator, self.generation,
                                            self.output_index)
        stand_in._requires_grad = self._requires_grad
        return stand_in


class _Retain:
    """The hook that `retain_grad` adds: stores the gradient on the tensor it came from."""

    def __init__(self, t: Tensor) -> None:
        self.ref = weakref.ref(t)

    def __call__(self, grad: Tensor) -> None:
        t = self.ref()
        if t is None:
            return
        if t._grad is not None:
            t._grad = _tensor_class()(t._grad.array + grad.array)
        elif grad.requires_grad:  # create_graph: the gradient's graph is kept
            t._grad = grad.clone()
        else:  # the tensor's own, as PyTorch's: the array flows on to other gradients
            t._grad = _tensor_class()(grad.array.copy())


class _HookHandle:
    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)
