"""The in-place forms of the shape ops (`unsqueeze_`, `t_`, `transpose_`, `resize_`, ...),
PyTorch's legacy `new`, the layout predicates a CPU tensor answers (`is_sparse`, ...),
shared memory (`share_memory_`), `apply_` and `map_`, and the hook run once a leaf's
gradient is accumulated."""

from __future__ import annotations

from typing import Any

import numpy as np


def _view_(name: str, args: str) -> Any:
    """`name` taken in place: the tensor becomes its own view of another shape (its data
    untouched), and in the graph that view's output."""
    def method(self: Any, *a: Any, **kw: Any) -> Any:
        return self._inplace_view(lambda t: getattr(t, name)(*a, **kw))
    method.__name__ = name + "_"
    method.__doc__ = (f"`{name}({args})` in place: this tensor takes the new shape; returns "
                      f"self.\n\nExamples:\n    >>> x = lm.zeros(2, 3)\n"
                      f"    >>> x.{name}_({args}) is x\n    True")
    return method


class InplaceViewMethods:
    __slots__ = ()

    squeeze_, unsqueeze_ = _view_("squeeze", ""), _view_("unsqueeze", "0")
    t_, transpose_ = _view_("t", ""), _view_("transpose", "0, 1")
    swapaxes_, swapdims_ = _view_("swapaxes", "0, 1"), _view_("swapdims", "0, 1")

    def resize_(self, *sizes: Any) -> Any:
        """Give the tensor `sizes`, keeping its first elements in row-major order; new
        elements past the old ones are zeros (PyTorch leaves them uninitialised). Not for
        tensors that require grad, as in PyTorch.

        Examples:
            >>> lm.arange(6.0).reshape(2, 3).resize_(2, 2)
            tensor([[0., 1.],
                    [2., 3.]])
        """
        if self._requires_grad:
            raise RuntimeError("resize_: cannot resize variables that require grad")
        shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) \
            else tuple(sizes)
        new = np.zeros(shape, self.array.dtype)
        n = min(new.size, self.array.size)
        new.reshape(-1)[:n] = self.array.reshape(-1)[:n]
        self.array = new
        self._counter()[0] += 1
        return self

    def resize_as_(self, other: Any) -> Any:
        """resize_ to `other`'s shape.

        Examples:
            >>> lm.zeros(4).resize_as_(lm.zeros(2, 2)).shape
            lamina.Size([2, 2])
        """
        return self.resize_(tuple(other.shape))

    def new(self, *args: Any, **kwargs: Any) -> Any:
        """PyTorch's legacy constructor, in this tensor's dtype: `new(2, 3)` a tensor of that
        shape (zeros here), `new([1, 2])` one of that data, `new()` an empty one.

        Examples:
            >>> lm.zeros(1, dtype=lm.float64).new([1, 2])
            tensor([1., 2.], dtype=lamina.float64)
        """
        if len(args) == 1 and not isinstance(args[0], int) and not hasattr(args[0], "numel"):
            return self.new_tensor(args[0], **kwargs)
        if len(args) == 1 and hasattr(args[0], "numel") and not isinstance(args[0], tuple):
            return self.new_tensor(args[0], **kwargs)
        return self.new_zeros(*(args or (0,)), **kwargs)

    @property
    def layout(self) -> Any:
        """lamina.strided: every tensor is a dense, strided array.

        Examples:
            >>> lm.zeros(2).layout
            lamina.strided
        """
        from lamina.dtypes import strided

        return strided

    def is_inference(self) -> bool:
        """False: lamina has no inference tensors (inference_mode runs as no_grad).

        Examples:
            >>> lm.zeros(2).is_inference()
            False
        """
        return False

    def is_shared(self) -> bool:
        """Whether this tensor's data is in shared memory (see share_memory_).

        Examples:
            >>> lm.zeros(2).is_shared()
            False
        """
        from lamina import shared_memory

        return shared_memory.is_shared(self.array)

    def share_memory_(self) -> Any:
        """Move this tensor's data to shared memory (lamina.shared_memory): processes
        forked after this, and those it is sent to through lamina.multiprocessing, read
        and write the same values. A no-op where it is there already; returns self.
        Tensors that viewed its old memory keep that memory.

        Examples:
            >>> x = lm.ones(3).share_memory_()
            >>> x.is_shared(), x
            (True, tensor([1., 1., 1.]))
        """
        from lamina import shared_memory

        if not shared_memory.is_shared(self.array):
            self.array = shared_memory.share(np.asarray(self.array))
        return self

    def apply_(self, callable: Any) -> Any:  # noqa: A002 - PyTorch's name
        """Replace every element x by callable(x), a Python function of a number, in place
        (slow, as in PyTorch; no gradient).

        Examples:
            >>> lm.tensor([1.0, 2.0]).apply_(lambda v: v * 10)
            tensor([10., 20.])
        """
        if self._requires_grad:
            raise RuntimeError("apply_: can't call apply_() on a tensor that requires grad")
        flat = self.array.reshape(-1)
        flat[...] = [callable(v) for v in flat.tolist()]
        self._counter()[0] += 1
        return self

    def map_(self, tensor: Any, callable: Any) -> Any:  # noqa: A002
        """Replace every element x by callable(x, y), y the element of `tensor` (broadcast
        to this tensor's shape) at its place, in place; no gradient.

        Examples:
            >>> lm.tensor([1.0, 2.0]).map_(lm.tensor([3.0, 4.0]), lambda a, b: a * b)
            tensor([3., 8.])
        """
        if self._requires_grad:
            raise RuntimeError("map_: can't call map_() on a tensor that requires grad")
        other = np.broadcast_to(np.asarray(getattr(tensor, "array", tensor)), self.shape)
        flat = self.array.reshape(-1)
        flat[...] = [callable(a, b) for a, b in zip(flat.tolist(), other.reshape(-1).tolist())]
        self._counter()[0] += 1
        return self

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call `hook(tensor)` on this leaf each time backward has added to its `.grad`
        (an optimizer step taken inside backward, as PyTorch's recipe does). Returns a
        handle whose `remove()` unregisters it.

        Examples:
            >>> w = lm.tensor([1.0], requires_grad=True)
            >>> h = w.register_post_accumulate_grad_hook(lambda t: t.grad.mul_(0.5))
            >>> (w * 4).sum().backward(); w.grad
            tensor([2.])
        """
        from lamina.autograd.tensor_autograd import _HookHandle

        if not self._requires_grad or self.creator is not None:
            raise RuntimeError("register_post_accumulate_grad_hook: the tensor must be a "
                               "leaf that requires grad")
        hooks = self._extras().setdefault("post_accumulate_hooks", [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)


def _false(name: str) -> property:
    def getter(self: Any) -> bool:
        return False
    getter.__doc__ = (f"False: lamina's tensors are dense CPU arrays.\n\nExamples:\n"
                      f"    >>> lm.zeros(1).{name}\n    False")
    return property(getter)


for _flag in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn",
              "is_xla", "is_xpu", "is_mps", "is_vulkan", "is_ipu", "is_maia", "is_mtia"):
    setattr(InplaceViewMethods, _flag, _false(_flag))
del _flag
