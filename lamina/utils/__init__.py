"""`lamina.utils`, as `torch.utils`: `lamina.utils.data` is `lamina.data`, imported at
first use (its loader brings in multiprocessing)."""

import importlib as _importlib

__all__ = ["checkpoint", "data", "dlpack"]


def __getattr__(name: str) -> object:
    if name in ("data", "checkpoint", "dlpack"):
        return _importlib.import_module(f"lamina.utils.{name}")
    raise AttributeError(f"module 'lamina.utils' has no attribute {name!r}")
