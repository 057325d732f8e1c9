"""`lamina.nn.parallel`: PyTorch's data-parallel wrappers, for scripts that import them.

lamina trains data-parallel on Ray with parameter servers (`lamina.distributed`), not
with process groups; these wrappers run the model as it is in one process, so a script
that wraps conditionally still runs, and tell how to train on many workers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from lamina.nn.layer import Layer


class DistributedDataParallel(Layer):
    """Holds `module` and calls it; with no process group, one process trains it.

    Examples:
        >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
        >>> model(lm.ones(1, 2)).shape
        lamina.Size([1, 2])
    """

    def __init__(self, module: Layer, device_ids: Any = None, output_device: Any = None,
                 **kwargs: Any) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped module's forward."""
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """PyTorch's gradient accumulation without synchronising: one process has no
        other to synchronise with.

        Examples:
            >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
            >>> with model.no_sync():
            ...     model(lm.ones(1, 2)).sum().backward()
        """
        yield


DataParallel = DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
