"""PyTorch's `torch.multiprocessing`: Python's multiprocessing, with tensors in shared
memory (`Tensor.share_memory_()`, `Module.share_memory()`) shared by the processes they
reach, and `spawn`.

A process forked after a tensor is shared maps the same memory; one it is sent to (a
Queue, a Pipe, a spawned Process's arguments) gets its block's file descriptor, never a
copy. A tensor not in shared memory is sent as a copy of its values (PyTorch moves it to
shared memory first): call `share_memory_()` on it to share it. Importing this module
registers how tensors travel with multiprocessing's own pickler (not with pickle).

    import lamina.multiprocessing as mp

    model.share_memory()  # Hogwild: every worker steps the same weights
    workers = [mp.Process(target=train, args=(rank, model)) for rank in range(4)]
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403 (PyTorch's module re-exports it all)

from lamina.multiprocessing.reductions import init_reductions
from lamina.multiprocessing.spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = [*multiprocessing.__all__, "ProcessContext", "ProcessException",
           "ProcessExitedException", "ProcessRaisedException", "get_all_sharing_strategies",
           "get_sharing_strategy", "init_reductions", "set_sharing_strategy", "spawn",
           "start_processes"]

# PyTorch's two strategies differ in how a block is named to the other process; lamina
# sends the descriptor of an anonymous file either way, which outlives no process.
_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = "file_descriptor"


def get_all_sharing_strategies() -> set[str]:
    """PyTorch's strategy names, which `set_sharing_strategy` accepts.

    Examples:
        >>> sorted(lamina.multiprocessing.get_all_sharing_strategies())
        ['file_descriptor', 'file_system']
    """
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """The strategy last set ("file_descriptor" at first, as PyTorch's on Linux).

    Examples:
        >>> lamina.multiprocessing.get_sharing_strategy()
        'file_descriptor'
    """
    return _strategy


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted for PyTorch's scripts; both strategies share memory the same way here."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise ValueError(f"set_sharing_strategy: expected one of {sorted(_STRATEGIES)}; got "
                         f"{new_strategy!r}")
    _strategy = new_strategy


init_reductions()
