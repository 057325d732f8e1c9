"""Checkpoints: arrays in safetensors, everything else as JSON in the same file's header.

One file per checkpoint, so one atomic rename publishes it whole: a crash leaves either
the previous file or the new one, never half of one. Each array's CRC-32 sits in the
header and is checked on reading, so a damaged file is named, never loaded; plain
safetensors readers ignore it. Nothing is ever unpickled; a file that is not a lamina or
safetensors checkpoint raises `CheckpointError` and runs nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from lamina.backend import to_numpy
from lamina.nn.state_dict import state_arrays

FORMAT = 1
_META_KEY = "lamina"
_OPT_PREFIX = "__optimizer__."
_EXTRA_PREFIX = "__extra__."
_NOT_NUMPY = frozenset({"BF16", "F8_E4M3", "F8_E5M2"})  # safetensors dtypes NumPy lacks


class CheckpointError(ValueError):
    """A checkpoint file cannot be read or does not fit; the message names the file."""


def _safetensors() -> Any:
    try:
        import safetensors.numpy as st
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("lamina.io needs safetensors: pip install 'lamina[io]'") from e
    return st


def split_arrays(obj: Any, prefix: str, out: dict[str, np.ndarray]) -> Any:
    """Replace every array in a nested dict/list with {"__array__": key}; collect the arrays."""
    if isinstance(obj, dict):
        return {str(k): split_arrays(v, f"{prefix}{k}.", out) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [split_arrays(v, f"{prefix}{i}.", out) for i, v in enumerate(obj)]
    if hasattr(obj, "shape") and hasattr(obj, "dtype"):
        key = prefix.rstrip(".")
        out[key] = _contiguous(obj)
        return {"__array__": key}
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def _contiguous(array: Any) -> np.ndarray:
    # Not np.ascontiguousarray: it turns 0-d arrays (num_batches_tracked) into 1-d ones.
    array = to_numpy(array)
    return array if array.flags.c_contiguous else array.copy(order="C")


def join_arrays(obj: Any, arrays: dict[str, np.ndarray]) -> Any:
    """Undo `split_arrays`."""
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return arrays[obj["__array__"]]
        return {k: join_arrays(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [join_arrays(v, arrays) for v in obj]
    return obj


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# A temporary file beside its target that has not changed for this long was left by a
# write that was killed: the next write of that target removes it.
STALE_SECONDS = 600


def atomic_write(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes to a temporary file beside `path`, fsync it, then rename it over `path`.
    Temporary files of `path` left by an earlier write that was killed are removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a saved file follows the umask
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _remove_stale(path: Path) -> None:
    now = time.time()
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if now - tmp.stat().st_mtime > STALE_SECONDS:
                tmp.unlink()
        except OSError:  # another process's, gone or not ours to remove: leave it
            pass


def checksum(array: np.ndarray) -> str:
    """CRC-32 of an array's bytes, as 8 hex digits."""
    return f"{zlib.crc32(memoryview(np.ascontiguousarray(array)).cast('B')):08x}"


def save(path: str | os.PathLike, model: Any, optimizer: Any = None,
         extra: dict[str, Any] | None = None) -> Path:
    """Save a model's state dict (and an optimizer's state) to one safetensors file.

    Args:
        path: the file to write; written atomically (temporary file, fsync, rename).
        model: a Layer (its state_dict and config are saved) or a name -> array dict.
        optimizer: optional; its state_dict is saved beside the weights.
        extra: optional dict of JSON-safe values and arrays (epoch, metrics, RNG state, a
            sampler's chain...); arrays go into the safetensors body, the rest into JSON.

    Returns:
        The path written.

    Raises:
        TypeError: `extra` holds something neither JSON-safe nor an array.

    Examples:
        >>> lm.io.save("ckpt.safetensors", model, optimizer, extra={"epoch": 3})
    """
    arrays = {k: _contiguous(v) for k, v in state_arrays(model).items()}
    extra_arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"format": FORMAT, "config": None,
                            "extra": split_arrays(extra or {}, _EXTRA_PREFIX, extra_arrays)}
    arrays.update(extra_arrays)
    if hasattr(model, "to_config"):
        try:
            meta["config"] = model.to_config()
        except ValueError:  # an unregistered user layer: weights only
            meta["config"] = None
    if optimizer is not None:
        opt_arrays: dict[str, np.ndarray] = {}
        meta["optimizer"] = split_arrays(optimizer.state_dict(), _OPT_PREFIX, opt_arrays)
        arrays.update(opt_arrays)
    meta["checksums"] = {k: checksum(v) for k, v in arrays.items()}
    try:
        header = json.dumps(meta)
    except TypeError as e:
        raise TypeError(f"io.save: extra must be JSON-serialisable: {e}") from e
    return atomic_write(path, _safetensors().save(arrays, metadata={_META_KEY: header}))


def read(path: str | os.PathLike) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a checkpoint: (arrays by name, lamina metadata; {} for a plain safetensors file).

    Raises:
        CheckpointError: missing, truncated, corrupt or foreign file.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    st = _safetensors()
    try:
        data = path.read_bytes()
        header_len = int.from_bytes(data[:8], "little")
        header = json.loads(data[8:8 + header_len])
        unreadable = sorted({v.get("dtype") for k, v in header.items()
                             if k != "__metadata__" and isinstance(v, dict)
                             and v.get("dtype") in _NOT_NUMPY})
        arrays = {} if unreadable else st.load(data)
    except Exception as e:  # safetensors raises its own SafetensorError type
        raise CheckpointError(
            f"{path}: not a readable safetensors checkpoint (truncated, corrupt or another "
            f"format; lamina never unpickles): {e}"
        ) from e
    if unreadable:
        raise CheckpointError(f"{path}: holds {', '.join(unreadable)} tensors, which NumPy "
                              "has no type for; save them as float32 (in PyTorch: "
                              "{k: v.float() for k, v in state_dict.items()})")
    raw = (header.get("__metadata__") or {}).get(_META_KEY)
    try:
        meta = json.loads(raw) if raw else {}
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path}: lamina metadata is corrupt: {e}") from e
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: lamina metadata is not a mapping")
    if not isinstance(meta.get("format", FORMAT), int) or meta.get("format", FORMAT) > FORMAT:
        raise CheckpointError(f"{path}: written by a newer lamina (format "
                              f"{meta.get('format')!r}); this one reads format {FORMAT}")
    for name, expected in (meta.get("checksums") or {}).items():
        if name in arrays and checksum(arrays[name]) != expected:
            raise CheckpointError(f"{path}: tensor {name!r} does not match its checksum: the "
                                  "file is damaged; load another checkpoint")
    return arrays, meta


def non_finite(arrays: dict[str, np.ndarray]) -> list[str]:
    """The names of the floating-point arrays holding NaN or infinity."""
    return [k for k, v in arrays.items()
            if np.asarray(v).dtype.kind == "f" and not np.isfinite(v).all()]


def load(path: str | os.PathLike, model: Any = None, optimizer: Any = None,
         strict: bool = True) -> dict[str, Any]:
    """Load a checkpoint into a model (and optimizer); return what else it holds.

    A safetensors file written from a PyTorch state dict loads into the matching lamina
    model as it is: the names and layouts are PyTorch's.

    Args:
        path: a file written by `save`, or any safetensors file of weights.
        model: a Layer to load the weights into (optional).
        optimizer: an optimizer to restore (optional; the file must hold its state).
        strict: passed to `model.load_state_dict`.

    Returns:
        {"state": weights by name, "optimizer": optimizer state or None, "extra": the
        saved extra dict, "config": the model's config or None}.

    Raises:
        CheckpointError: an unreadable file; weights that do not fit the model (every
            mismatch listed); no optimizer state when one is asked for, or state that does
            not fit the optimizer.
    """
    arrays, meta = read(path)
    weights = {k: v for k, v in arrays.items()
               if not k.startswith((_OPT_PREFIX, _EXTRA_PREFIX))}
    opt_state = join_arrays(meta["optimizer"], arrays) if "optimizer" in meta else None
    if model is not None:
        try:
            model.load_state_dict(weights, strict=strict)
        except RuntimeError as e:
            raise CheckpointError(f"{path}: does not fit the model (was it written for "
                                  f"another architecture?): {e.args[0]}") from e
    if optimizer is not None:
        if opt_state is None:
            raise CheckpointError(f"{path}: holds no optimizer state")
        try:
            optimizer.load_state_dict(opt_state)
        except ValueError as e:
            raise CheckpointError(f"{path}: does not fit the optimizer: {e}") from e
    return {"state": weights, "optimizer": opt_state,
            "extra": join_arrays(meta.get("extra", {}), arrays), "config": meta.get("config")}
