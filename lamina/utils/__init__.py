"""`lamina.utils`, as `torch.utils`: `lamina.utils.data` is `lamina.data`, imported at
first use (its loader brings in multiprocessing)."""

import importlib as _importlib

__all__ = ["data"]


def __getattr__(name: str) -> object:
    if name == "data":
        return _importlib.import_module("lamina.utils.data")
    raise AttributeError(f"module 'lamina.utils' has no attribute {name!r}")
