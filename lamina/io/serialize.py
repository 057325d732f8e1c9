"""`lamina.save(obj, f)` and `lamina.load(f)`: PyTorch's calls for what users save (state
dicts of models and optimizers, and dicts/lists of them with numbers and strings), written
as safetensors plus JSON. Never pickle, never code run on load.

The arrays go into the safetensors body (readable by plain `safetensors`); the structure
around them goes into its JSON header, each container tagged with its kind, so tuples,
integer keys (an optimizer's state) and shared tensors come back as they were saved.
`lamina.load` also reads PyTorch's own `.pt` files (lamina.io.torch_pickle).
"""

from __future__ import annotations

import io
import json
import math
import os
from collections import OrderedDict
from typing import Any, BinaryIO

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.io.checkpoint import CheckpointError, _contiguous, _safetensors, atomic_write
from lamina.io.torch_pickle import load_torch_file

_KEY = "lamina.object"


def save(obj: Any, f: str | os.PathLike | BinaryIO, pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True) -> None:
    """Save `obj` to a path (atomically) or a binary file object.

    Args:
        obj: a state dict, or dicts/lists/tuples of tensors, arrays, numbers, strings and
            None (an optimizer's state_dict(), a checkpoint dict of several).
        f: a file path or an object with `write`.

    Raises:
        TypeError: obj holds something else (a whole module, a function, ...); the
            message names where it is and what to save instead.

    Examples:
        >>> buf = io.BytesIO()
        >>> lm.save({"w": lm.ones(2), "epoch": 3}, buf)
        >>> _ = buf.seek(0); lm.load(buf)
        {'w': tensor([1., 1.]), 'epoch': 3}
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, "obj", arrays, {})
    data = _safetensors().save(arrays, metadata={_KEY: json.dumps(tree)})
    if hasattr(f, "write"):
        f.write(data)
    else:
        atomic_write(f, data)


def load(f: str | os.PathLike | BinaryIO, map_location: Any = None, pickle_module: Any = None,
         *, weights_only: bool = True, mmap: Any = None, **kwargs: Any) -> Any:
    """Load what `lamina.save` wrote, a plain safetensors file (a dict of tensors), or a
    file PyTorch's `torch.save` wrote (read without running its pickle).

    Args:
        f: a file path or an object with `read` (and `seek`).
        map_location: accepted for PyTorch's signature; tensors load on the CPU.
        weights_only: accepted; lamina loads only data either way.

    Raises:
        CheckpointError: an unreadable file, or a PyTorch file whose pickle asks for
            anything but tensors, containers and numbers (named in the message).

    Examples:
        >>> buf = io.BytesIO(); lm.save([lm.zeros(1), (1, "a")], buf); _ = buf.seek(0)
        >>> lm.load(buf, map_location="cpu")
        [tensor([0.]), (1, 'a')]
    """
    if isinstance(map_location, (str, dtypes.device)):
        dtypes.check_device(map_location)
    where = str(f) if not hasattr(f, "read") else "the file object"
    data = f.read() if hasattr(f, "read") else _read(f)
    if data[:2] == b"PK":
        return load_torch_file(io.BytesIO(data) if hasattr(f, "read") else f)
    try:
        arrays = _safetensors().load(data)
        header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")])
    except Exception as e:  # safetensors raises its own error type
        raise CheckpointError(f"{where}: neither a safetensors file nor PyTorch's zip format "
                              f"(lamina never unpickles): {e}") from e
    raw = (header.get("__metadata__") or {}).get(_KEY)
    if raw is None:  # a plain safetensors file: its tensors by name
        return {name: Tensor(np.array(a)) for name, a in arrays.items()}
    return _decode(json.loads(raw), arrays, {})


def _read(path: str | os.PathLike) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError) as e:
        raise CheckpointError(f"{path}: {e.strerror.lower()}") from None


def _encode(obj: Any, path: str, arrays: dict[str, np.ndarray], seen: dict[int, str]) -> Any:
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"float": repr(obj)}
    if isinstance(obj, np.generic):
        return _encode(obj.item(), path, arrays, seen)
    if isinstance(obj, (Tensor, np.ndarray)):
        array = obj.array if isinstance(obj, Tensor) else obj
        name = seen.get(id(array))
        if name is None:  # a tensor saved twice (tied weights) is stored once
            name = seen[id(array)] = f"t{len(seen)}"
            arrays[name] = _contiguous(array)
        kind = "tensor" if isinstance(obj, Tensor) else "ndarray"
        return {kind: name, "requires_grad": bool(getattr(obj, "requires_grad", False))}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, OrderedDict) else "dict"
        return {kind: [[_encode(k, f"{path} key", arrays, seen),
                        _encode(v, f"{path}[{k!r}]", arrays, seen)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {type(obj).__name__: [_encode(v, f"{path}[{i}]", arrays, seen)
                                     for i, v in enumerate(obj)]}
    if hasattr(obj, "state_dict"):
        raise TypeError(f"lamina.save: {path} is a {type(obj).__name__}, which would need "
                        "pickle to save whole (lamina never uses it); save its state_dict() "
                        "instead, and build the object in code before load_state_dict")
    raise TypeError(f"lamina.save: {path} is a {type(obj).__name__}; lamina saves tensors, "
                    "arrays, numbers, strings, None, and dicts, lists and tuples of them")


def _decode(tree: Any, arrays: dict[str, np.ndarray], made: dict[str, Tensor]) -> Any:
    if not isinstance(tree, dict):
        return tree
    if "float" in tree:
        return float(tree["float"])
    if "tensor" in tree or "ndarray" in tree:
        name = tree.get("tensor", tree.get("ndarray"))
        if name not in made:
            a = np.array(arrays[name])
            made[name] = (Tensor(a, requires_grad=tree["requires_grad"] and a.dtype.kind == "f")
                          if "tensor" in tree else a)
        return made[name]
    if "dict" in tree or "odict" in tree:
        pairs = [(_decode(k, arrays, made), _decode(v, arrays, made))
                 for k, v in tree.get("dict", tree.get("odict"))]
        return OrderedDict(pairs) if "odict" in tree else dict(pairs)
    if "list" in tree:
        return [_decode(v, arrays, made) for v in tree["list"]]
    return tuple(_decode(v, arrays, made) for v in tree["tuple"])
