"""PyTorch's process-group calls, importable from `lamina.distributed` so that scripts
written for torch.distributed load. lamina distributes with Ray and parameter servers;
with no process group, a script is one process of one: rank 0 of world size 1."""

from __future__ import annotations

from typing import Any

_ADVICE = ("lamina trains on many workers with Ray and parameter servers, not process "
           "groups: use `lamina train JOB.yaml --workers N`, or lamina.distributed.Cluster")


def is_available() -> bool:
    """True: the names are here (process groups themselves are not; see init_process_group)."""
    return True


def is_initialized() -> bool:
    """False: no process group is ever formed."""
    return False


def init_process_group(backend: Any = None, *args: Any, **kwargs: Any) -> None:
    """Refuses, with the way lamina trains on many workers.

    Raises:
        RuntimeError: always; the message says how to train distributed in lamina.
    """
    raise RuntimeError(f"init_process_group: {_ADVICE}")


def destroy_process_group(group: Any = None) -> None:
    """Nothing to destroy."""


def get_rank(group: Any = None) -> int:
    """0: the only process."""
    return 0


def get_world_size(group: Any = None) -> int:
    """1: one process."""
    return 1


def barrier(group: Any = None) -> None:
    """Nothing to wait for in one process."""
