"""Read PyTorch's `.pt` / `.pth` files (torch.save's zip format) without running their pickle.

A pickle is a program; running it (pickle.load) runs whatever it names. Here the program
is only read: `pickletools.genops` parses its opcodes, and a small stack machine below
carries out the few that state dicts use. Of the globals a pickle may name, only those
that rebuild containers and tensors are known (`_GLOBALS`); any other (`os.system`, a
user's class) is refused with its name, before anything is built from it. Tensors are
read from the zip's raw storage files as NumPy arrays.
"""

from __future__ import annotations

import pickletools
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from lamina.io.checkpoint import CheckpointError

_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64,
             "HalfStorage": np.float16, "BFloat16Storage": "bfloat16", "LongStorage": np.int64,
             "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
             "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class _StorageType:
    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple[int, ...],
                    stride: tuple[int, ...], requires_grad: bool = False, *rest: Any) -> Any:
    """A tensor viewing `storage` at offset with size and stride (in elements), copied."""
    from lamina.autograd.tensor import Tensor

    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                           strides=tuple(s * item for s in stride))
    return Tensor(np.array(view), requires_grad=bool(requires_grad) and
                  storage.dtype.kind == "f")


def _rebuild_parameter(data: Any, requires_grad: bool, *rest: Any) -> Any:
    from lamina.nn.layer import Parameter

    return Parameter(data, requires_grad=bool(requires_grad))


# module name, attribute -> what the name means here (never an import of the module)
_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    **{("torch", name): _StorageType(dtype) for name, dtype in _STORAGES.items()},
}
_MARK = object()


def load_torch_file(path: Any) -> Any:
    """The object a torch.save zip file holds: dicts, lists, tuples, numbers, strings and
    tensors (as lamina Tensors).

    Raises:
        CheckpointError: not a zip of torch's format, or a pickle that asks for anything
            outside the allow-list (named in the message).
    """
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise CheckpointError(
            f"{path}: not a zip file; PyTorch's legacy (pre-1.6) format is not read. Re-save "
            "it with torch.save(obj, f) in a current PyTorch, or as safetensors") from None
    with archive:
        names = archive.namelist()
        pkl = next((n for n in names if n.endswith("/data.pkl") or n == "data.pkl"), None)
        if pkl is None:
            raise CheckpointError(f"{path}: a zip file, but not PyTorch's (no data.pkl)")
        root = pkl[: -len("data.pkl")]
        storages: dict[str, np.ndarray] = {}

        def storage(pid: Any) -> np.ndarray:
            kind, storage_type, key, _location, numel = pid
            if kind != "storage" or not isinstance(storage_type, _StorageType):
                raise CheckpointError(f"{path}: unknown persistent id {pid!r}")
            if key not in storages:
                raw = archive.read(f"{root}data/{key}")
                storages[key] = _array(raw, storage_type.dtype)[: int(numel)]
            return storages[key]

        return _run(archive.read(pkl), storage, str(path))


def _array(raw: bytes, dtype: Any) -> np.ndarray:
    if dtype == "bfloat16":  # NumPy has none: widen exactly to float32 (its top 16 bits)
        bits = np.frombuffer(raw, "<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    return np.frombuffer(raw, np.dtype(dtype).newbyteorder("<")).astype(dtype)


def _run(data: bytes, persistent_load: Callable[[Any], Any], where: str) -> Any:
    """Carry out the pickle's opcodes on a stack, building only allow-listed objects."""
    stack: list[Any] = []
    memo: dict[int, Any] = {}

    def pop_mark() -> list[Any]:
        i = next(k for k in range(len(stack) - 1, -1, -1) if stack[k] is _MARK)
        items = stack[i + 1:]
        del stack[i:]
        return items

    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in ("PROTO", "FRAME"):
            continue
        if name == "STOP":
            return stack.pop()
        if name in ("BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BININT", "BININT1",
                    "BININT2", "LONG1", "BINFLOAT", "SHORT_BINBYTES", "BINBYTES"):
            stack.append(arg)
        elif name in ("NONE", "NEWTRUE", "NEWFALSE"):
            stack.append({"NONE": None, "NEWTRUE": True, "NEWFALSE": False}[name])
        elif name == "EMPTY_DICT":
            stack.append({})
        elif name == "EMPTY_LIST":
            stack.append([])
        elif name == "EMPTY_TUPLE":
            stack.append(())
        elif name == "MARK":
            stack.append(_MARK)
        elif name == "TUPLE":
            stack.append(tuple(pop_mark()))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = tuple(stack[-n:])
            del stack[-n:]
            stack.append(items)
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[int(arg)] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            stack.append(memo[int(arg)])
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            stack[-1][key] = value
        elif name == "SETITEMS":
            items = pop_mark()
            for k in range(0, len(items), 2):
                stack[-1][items[k]] = items[k + 1]
        elif name == "APPEND":
            value = stack.pop()
            stack[-1].append(value)
        elif name == "APPENDS":
            items = pop_mark()
            stack[-1].extend(items)
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            module, attr = (arg.split(" ", 1) if name == "GLOBAL"
                            else (stack.pop(-2), stack.pop()))
            stack.append(_global(module, attr, where))
        elif name == "REDUCE":
            args, fn = stack.pop(), stack.pop()
            stack.append(fn(*args))
        elif name == "BUILD":
            stack.pop()  # attributes set on the object (a state dict's _metadata): not needed
        elif name == "BINPERSID":
            stack.append(persistent_load(stack.pop()))
        else:
            raise CheckpointError(f"{where}: the file's pickle uses opcode {name}, which lamina "
                                  "does not read (it reads state dicts of tensors, numbers "
                                  "and strings)")
    raise CheckpointError(f"{where}: the pickle ends without STOP (truncated file)")


def _global(module: str, attr: str, where: str) -> Any:
    known = _GLOBALS.get((module, attr))
    if known is None:
        raise CheckpointError(
            f"{where}: refused: the file's pickle asks for {module}.{attr}, which is not a "
            "tensor, a container or a number (lamina never runs a pickle; it reads state "
            "dicts of tensors, numbers and strings). Save state_dict() objects only")
    return known
