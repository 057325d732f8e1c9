"""How a tensor travels to another process through multiprocessing's pickler (a Queue,
a Pipe, a spawned Process's arguments): one in shared memory as its block's file
descriptor, so both processes work on the same values, as PyTorch's do; any other as a
copy of its values. Registered with multiprocessing's ForkingPickler only, never with
pickle itself: nothing here is ever written to a file."""

from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler
from typing import Any

from lamina import shared_memory
from lamina.autograd.tensor import Tensor


def reduce_tensor(t: Tensor) -> tuple[Any, ...]:
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries.  If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., "
            "putting it on the queue).")
    if not shared_memory.is_shared(t.array):
        return t.__reduce_ex__(2)  # by value, as pickle sends any object
    a = t.array
    fd, nbytes, offset = shared_memory.describe(a)
    return rebuild_tensor, (type(t), DupFd(fd), nbytes, offset, a.shape, a.strides,
                            a.dtype.str, t.requires_grad, t.name)


def rebuild_tensor(cls: type, fd: Any, nbytes: int, offset: int, shape: tuple[int, ...],
                   strides: tuple[int, ...], dtype: str, requires_grad: bool,
                   name: str | None) -> Tensor:
    array = shared_memory.attach(fd.detach(), nbytes, offset, shape, strides, dtype)
    t = object.__new__(cls)
    Tensor.__init__(t, array, requires_grad=requires_grad, name=name)
    return t


def _classes(cls: type) -> list[type]:
    return [cls, *(c for sub in cls.__subclasses__() for c in _classes(sub))]


def init_reductions() -> None:
    """Register reduce_tensor for Tensor and every subclass defined so far."""
    import lamina.nn  # noqa: F401 (Parameter and Buffer, subclasses to register)

    for cls in _classes(Tensor):
        ForkingPickler.register(cls, reduce_tensor)
