"""numba's runtime functions read back from disk, as lamina's kernels are.

The machine code of numba's kernels calls a few functions of numba's runtime (NRT):
reference counts, a memory block's data. numba makes them when its runtime starts, in
every process, by compiling a small LLVM module. That compile is often the process's only
use of LLVM's code generator, whose start alone holds tens of MB for the life of the
process (benchmarks/RESULTS.md), for code that is the same in every process. `start`
compiles the module once, keeps its object code beside the kernels' cache, and later
processes read it back as numba reads a cached kernel: the same functions, linked the
same way, and numba code compiled later in the process links them as it would numba's.

The file holds MAGIC, then four length-prefixed fields: the key (numba's and llvmlite's
versions and the target the code is compiled for: triple, CPU, features), the object code,
the module's bitcode (which numba links into code it compiles) and the SHA-256 of the
three, so that no damaged code is ever linked. A file that does not match is compiled
again and replaced; nothing in it is unpickled. Where the directory is
not writable, or numba's internals differ from what this reads, the runtime starts as
numba starts it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
from typing import Any

import llvmlite
import numba
from llvmlite import binding
from numba.core import config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import _nrt_python, nrtdynmod, rtsys

MAGIC = b"lamina numba runtime 1\n"
_LENGTH = struct.Struct("<Q")


def start(context: Any, directory: str) -> None:
    """Start numba's runtime for `context` (numba's CPU target context), once a process:
    its functions read from `directory`, or compiled and written there."""
    if rtsys._init:
        return
    with global_compiler_lock:
        if rtsys._init:
            return
        if config.DEBUG_NRT:  # its functions print: not the code kept on disk
            rtsys.initialize(context)
            return
        try:
            if config.NRT_STATS:
                _nrt_python.memsys_enable_stats()
            for name, address in _nrt_python.c_helpers.items():  # what the functions call
                binding.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
            library = _load(context, directory)
        except Exception:  # numba's internals moved: its own start (repeats what ran here)
            rtsys.initialize(context)
            return
        rtsys._library, rtsys._init = library, True


def _load(context: Any, directory: str) -> Any:
    """The runtime's code library, read from its file in `directory` where that matches
    this process, else compiled (and written there where it can be)."""
    codegen = context.codegen()
    key = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple())).encode()
    path = os.path.join(directory, f"nrt-{hashlib.sha256(key).hexdigest()[:16]}.bin")
    fields = _read(path)
    if fields is not None and fields[0] == key:
        return codegen.unserialize_library(("nrt", "object", tuple(fields[1:])))
    module, library = nrtdynmod.create_nrt_module(context)
    library.enable_object_caching()  # keeps the object code to write
    library.add_ir_module(module)
    library.finalize()
    _name, _kind, (code, bitcode) = library.serialize_using_object_code()
    _write(path, [key, code, bitcode])
    return library


def _read(path: str) -> list[bytes] | None:
    """The file's key, code and bitcode, or None where it is missing, not one of these
    files, or damaged."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    fields, at = [], len(MAGIC)
    for _ in range(4):
        if at + _LENGTH.size > len(data):
            return None
        (n,) = _LENGTH.unpack_from(data, at)
        at += _LENGTH.size
        if at + n > len(data):
            return None
        fields.append(data[at:at + n])
        at += n
    if at != len(data) or fields.pop() != _digest(fields):
        return None
    return fields


def _digest(fields: list[bytes]) -> bytes:
    digest = hashlib.sha256()
    for field in fields:
        digest.update(_LENGTH.pack(len(field)))
        digest.update(field)
    return digest.digest()


def _write(path: str, fields: list[bytes]) -> None:
    """Write the file whole or not at all: another process may read it meanwhile."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=directory, prefix=".nrt-")
    except OSError:
        return  # not writable: compiled again in the next process, as numba does
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC)
            for field in [*fields, _digest(fields)]:
                f.write(_LENGTH.pack(len(field)))
                f.write(field)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)
