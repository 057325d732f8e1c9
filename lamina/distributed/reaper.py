"""No orphans: a small process that outlives the driver only to end the Ray cluster the
driver started, however the driver ends (kill -9 included).

Ray's local cluster runs as the driver's child processes, and some of them (its dashboard
and runtime-env agents) keep running after a driver killed with SIGKILL. `watch` starts a
reaper that holds the read end of a pipe only the driver can write to; when the driver
dies, for any reason, the pipe closes, and the reaper kills every process carrying the
session's marker in its environment (what the driver set before starting Ray, so Ray's
processes and the workers they start inherit it), then removes the session's temp
folder if lamina made it. Linux only (it reads /proc); elsewhere nothing is started.

Run as `python -m lamina.distributed.reaper MARKER [TMPDIR]`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

MARKER = "LAMINA_RAY_SESSION"
GRACE_SECONDS = 2.0  # for a driver's own ray.shutdown to finish first
_WATCHING: list[int] = []  # the pipes' write ends, open until this process ends


def watch(tmpdir: str | None = None) -> str | None:
    """Mark this process's environment with a new session id and start its reaper.
    Returns the id (None where /proc is missing)."""
    if not Path("/proc/self/environ").exists():
        return None
    session = uuid.uuid4().hex
    os.environ[MARKER] = session
    # The pipe's write end stays open in this process (and only here: Python's descriptors
    # are not inherited by the processes Ray starts) until it exits. posix_spawn, not
    # Popen: nothing here waits for the reaper, and a Popen left running warns at exit.
    read, write = os.pipe()
    os.posix_spawn(sys.executable, [sys.executable, "-m", "lamina.distributed.reaper",
                                    session, *([tmpdir] if tmpdir else [])], os.environ,
                   file_actions=[(os.POSIX_SPAWN_DUP2, read, 0),
                                 (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                 (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)],
                   setsid=True)  # its own session: a Ctrl-C to ours spares it
    os.close(read)
    _WATCHING.append(write)
    return session


def marked(session: str, tmpdir: str | None = None) -> list[int]:
    """The pids of the processes whose environment carries this session's marker, or
    names `tmpdir` (a folder lamina made for this session alone) as RAY_TMPDIR: Ray's
    agents rewrite their process title over the start of their environment, which can
    take the marker with it."""
    needles = {f"{MARKER}={session}".encode()}
    if tmpdir:
        needles.add(f"RAY_TMPDIR={tmpdir}".encode())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needles & set((entry / "environ").read_bytes().split(b"\0")):
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def reap(session: str, tmpdir: str | None) -> None:
    """Kill the session's processes (SIGKILL: a hung one must go too); remove tmpdir."""
    for _ in range(3):  # a process may start another while the first sweep runs
        pids = marked(session, tmpdir)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):  # gone meanwhile
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def main(argv: list[str]) -> None:
    session, tmpdir = argv[0], (argv[1] if len(argv) > 1 else None)
    sys.stdin.buffer.read()  # returns when the driver's end closes: the driver is gone
    time.sleep(GRACE_SECONDS)
    reap(session, tmpdir)


if __name__ == "__main__":
    main(sys.argv[1:])
