"""No orphans: a small process that outlives the driver only to end the Ray cluster the
driver started, however the driver ends (kill -9 included).

Ray's local cluster runs as the driver's child processes, and some of them (its dashboard
and runtime-env agents) keep running after a driver killed with SIGKILL. `watch` starts a
reaper that holds the read end of a pipe only the driver can write to. While the driver
lives, the reaper notes its descendants four times a second (Ray's agents rewrite their title
over their environment, so no mark in it can be relied on); when the driver dies, for
any reason, the pipe closes, and the reaper kills those it noted that still run, and
every process carrying the session's marker in its environment (what the driver set
before starting Ray), then removes the session's temp folder if lamina made it. Linux
only (it reads /proc); elsewhere nothing is started.

Run as `python -m lamina.distributed.reaper MARKER [TMPDIR]`.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

MARKER = "LAMINA_RAY_SESSION"
GRACE_SECONDS = 2.0  # for a driver's own ray.shutdown to finish first
SCAN_SECONDS = 0.25  # how often the driver's descendants are noted
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


def _stat(pid: str) -> tuple[int, str] | None:
    """(parent pid, start time) of a process, from /proc/<pid>/stat."""
    try:
        fields = (Path("/proc") / pid / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[19]


def descendants(root: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process below `root` now."""
    stats = {int(e.name): st for e in Path("/proc").iterdir()
             if e.name.isdigit() and (st := _stat(e.name)) is not None}
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.add((pid, stats[pid][1]))
        todo.extend(children.get(pid, []))
    return found


def main(argv: list[str]) -> None:
    session, tmpdir = argv[0], (argv[1] if len(argv) > 1 else None)
    driver, me = os.getppid(), os.getpid()
    seen: set[tuple[int, str]] = set()
    while True:  # until the driver's end of the pipe closes: the driver is gone
        ready, _, _ = select.select([sys.stdin.buffer], [], [], SCAN_SECONDS)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break
        seen |= {d for d in descendants(driver) if d[0] != me}
    # What those noted started since the last look (the raylet's agents, workers): the
    # driver's children are orphans now, but theirs are still theirs.
    for pid, _ in list(seen):
        seen |= descendants(pid)
    time.sleep(GRACE_SECONDS)
    for pid, started in seen:  # still the process noted (a pid may have been reused)
        stat = _stat(str(pid))
        if stat is not None and stat[1] == started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    reap(session, tmpdir)


if __name__ == "__main__":
    main(sys.argv[1:])
