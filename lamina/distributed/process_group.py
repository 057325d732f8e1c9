"""PyTorch's process-group calls, importable from `lamina.distributed` so that scripts
written for torch.distributed run. lamina distributes with Ray and parameter servers, not
process groups; what it forms here is PyTorch's group of one process (world size 1, as
`torchrun --nproc_per_node=1` or `WORLD_SIZE=1` gives), whose collectives leave every
tensor as it is, so such a script runs unchanged. A larger world is refused with the way
lamina trains on many workers."""

from __future__ import annotations

import enum
import os
from typing import Any

_ADVICE = ("lamina trains on many workers with Ray and parameter servers, not process "
           "groups: use `lamina train JOB.yaml --workers N`, or lamina.distributed.Cluster")
_group: dict[str, Any] = {}  # the default group once formed: {"backend": ...}


class ReduceOp(enum.Enum):
    """PyTorch's reductions; over one process each leaves the tensor as it is.

    Examples:
        >>> lm.distributed.ReduceOp.SUM
        <ReduceOp.SUM: 'sum'>
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


def is_available() -> bool:
    """True: the calls are here (for one process; see init_process_group)."""
    return True


def is_initialized() -> bool:
    """Whether init_process_group has formed the (one-process) default group."""
    return bool(_group)


def _from_env(name: str, given: int) -> int | None:
    if given != -1:
        return given
    value = os.environ.get(name)
    return int(value) if value is not None else None


def init_process_group(backend: Any = None, init_method: Any = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: Any = None,
                       group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Form PyTorch's default group where it is one process: world_size 1 given, or
    WORLD_SIZE=1 in the environment (as torchrun sets it), rank 0.

    Raises:
        RuntimeError: a world of more than one process, or of an unknown size (the
            message says how lamina trains on many workers).
        ValueError: a second call before destroy_process_group, as PyTorch's.
    """
    if _group:
        raise ValueError("trying to initialize the default process group twice!")
    size, me = _from_env("WORLD_SIZE", world_size), _from_env("RANK", rank)
    if size != 1 or me not in (None, 0):
        got = ("no WORLD_SIZE in the environment and no world_size given" if size is None
               else f"world_size {size}, rank {me}")
        raise RuntimeError(f"init_process_group: lamina forms process groups of one process "
                           f"only (world_size=1, rank=0); got {got}. {_ADVICE}")
    _group["backend"] = str(backend or "gloo").split(":")[0]


def destroy_process_group(group: Any = None) -> None:
    """Dissolve the default group (nothing to wait for)."""
    _group.clear()


def get_backend(group: Any = None) -> str:
    """The backend the group was formed with ("gloo" unless another was named)."""
    if not _group:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return _group["backend"]


def get_rank(group: Any = None) -> int:
    """0: the only process."""
    return 0


def get_world_size(group: Any = None) -> int:
    """1: one process."""
    return 1


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    """Nothing to wait for in one process."""


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> None:
    """The reduction over one process: the tensor, as it is.

    Examples:
        >>> t = lm.ones(2); lm.distributed.all_reduce(t); t
        tensor([1., 1.])
    """


def reduce(tensor: Any, dst: int = 0, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False) -> None:
    """The reduction onto rank 0, the only one: the tensor, as it is."""


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> None:
    """From rank 0 to itself: the tensor, as it is."""


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None,
               async_op: bool = False) -> None:
    """tensor_list[0] (of one process's list) gets the tensor's values.

    Examples:
        >>> out = [lm.zeros(2)]; lm.distributed.all_gather(out, lm.ones(2)); out
        [tensor([1., 1.])]
    """
    if len(tensor_list) != 1:
        raise ValueError(f"all_gather: one process gathers into a list of 1 tensor; got "
                         f"{len(tensor_list)}")
    tensor_list[0].copy_(tensor)


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """object_list[0] (of one process's list) gets obj."""
    object_list[0] = obj


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None,
                          device: Any = None) -> None:
    """From rank 0 to itself: the list, as it is."""
