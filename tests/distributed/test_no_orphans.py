"""However a driver that started its own Ray cluster ends (kill -9 included), nothing of
that cluster outlives it by more than a few seconds, and its temp folder goes too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lamina.distributed.reaper import _stat, descendants

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="Linux /proc")]

DRIVER = """
import os, sys, time
from lamina.distributed import init
init(num_cpus=2)
import ray

@ray.remote
class Actor:
    def pid(self):
        return os.getpid()

actor = Actor.remote()
ray.get(actor.pid.remote())
print(os.environ["LAMINA_RAY_SESSION"], os.environ["RAY_TMPDIR"], flush=True)
how = sys.argv[1]
if how == "raise":
    raise RuntimeError("the driver fails")
if how == "return":
    sys.exit(0)
time.sleep(300)
"""


def _marked(session: str, tmpdir: str) -> list[int]:
    """Processes of the session: its marker, or its temp folder, in their environment."""
    needles = {f"LAMINA_RAY_SESSION={session}".encode(), f"RAY_TMPDIR={tmpdir}".encode()}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needles & set((entry / "environ").read_bytes().split(b"\0")):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("how", ["kill -9", "sigterm", "raise", "return"])
def test_no_process_of_the_run_outlives_its_driver(how, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_TMPDIR", "RAY_ADDRESS", "LAMINA_RAY_SESSION")}
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    with subprocess.Popen([sys.executable, str(script), how], env=env, cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            session, tmpdir = proc.stdout.readline().split()
            assert len(_marked(session, tmpdir)) >= 4  # the driver, Ray's services, the actor...
            tree = descendants(proc.pid)  # Ray's services, its agents, the actor, the reaper
            if how == "kill -9":
                proc.send_signal(signal.SIGKILL)
            elif how == "sigterm":
                proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        finally:
            proc.kill()
    deadline = time.monotonic() + 15
    while _marked(session, tmpdir) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert _marked(session, tmpdir) == []

    def alive() -> list[int]:
        return [pid for pid, started in tree if (_stat(str(pid)) or (0, ""))[1] == started
                and not _zombie(pid)]

    # A process may be caught mid-exit (its command line already gone, not yet a zombie):
    # give the exits the same deadline, then none may be left.
    while alive() and time.monotonic() < deadline:
        time.sleep(0.25)
    left = alive()
    assert left == [], [(Path(f"/proc/{pid}/cmdline").read_bytes()[:60]) for pid in left]

    while Path(tmpdir).exists() and time.monotonic() < deadline:
        time.sleep(0.25)
    assert not Path(tmpdir).exists()


def _zombie(pid: int) -> bool:
    """Ended, but not yet reaped by its new parent: nothing runs there."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
