"""Kill -9 at random moments, resume, compare: the reliability figures of issue 36.

    python benchmarks/kill_loop.py [--local 12] [--distributed 8] [--seed 0]

A small job (digits, an MLP with batch norm and dropout, Adam; checkpoints every 10
iterations) is trained once uninterrupted. Then each trial starts the same job, kills
the `lamina train` process with SIGKILL after a random time within the uninterrupted
run's length, and runs `lamina train --resume` until the run completes (a run killed
before its first checkpoint starts again), killing nothing more. Its final weights are
compared with the uninterrupted run's, bit for bit. `--distributed` trials run the job
on 2 workers and 2 parameter servers (BSP): the driver is killed, the reaper ends its
Ray cluster, and `--resume` restarts the cluster from the servers' checkpoints. After
each distributed kill the script counts Ray processes still alive.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

JOB = """\
data: {name: digits, batch_size: 32}
model:
  type: Sequential
  layers:
    - {type: Linear, in_features: 64, out_features: 64}
    - {type: BatchNorm1d, num_features: 64}
    - {type: ReLU}
    - {type: Dropout, p: 0.2}
    - {type: Linear, in_features: 64, out_features: 10}
optimizer: {type: Adam, lr: 0.003}
trainer: {epochs: EPOCHS, seed: 0, progress: false, tensorboard: false, out_dir: runs,
          checkpoint_every: 10, checkpoint_unit: iteration}
"""


def lamina(folder: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lamina.cli", "train", "job.yaml", *args],
                            cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def weights(folder: Path, name: str) -> dict[str, np.ndarray]:
    import lamina as lm

    arrays, _ = lm.io.read(folder / "runs" / name / "checkpoints" / "last.safetensors")
    return {k: v for k, v in arrays.items() if not k.startswith("__")}


def ray_processes() -> int:
    out = subprocess.run(["ps", "-eo", "cmd"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines()
               if line.startswith(("ray::", "/") ) and ("ray" in line.split()[0]))


def trial(folder: Path, name: str, kill_after: float, extra: list[str]
          ) -> tuple[bool, int, str]:
    """Kill once after `kill_after` s, then resume to the end (a run killed before its
    first checkpoint starts again, under another name: a fresh run never writes over
    another's folder). Returns whether a checkpoint was there to resume from, the runs it
    took to finish, and the name of the run that finished."""
    proc = lamina(folder, "--set", f"name={name}", *extra)
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    checkpointed = (folder / "runs" / name / "checkpoints" / "last.safetensors").exists()
    resumes = 0
    if not checkpointed:
        name += "-again"
    while True:
        has = (folder / "runs" / name / "checkpoints" / "last.safetensors").exists()
        proc = lamina(folder, "--set", f"name={name}", *extra, *(["--resume"] if has else []))
        _, err = proc.communicate()
        resumes += 1
        if proc.returncode == 0:
            return checkpointed, resumes, name
        if resumes > 3:
            raise RuntimeError(f"{name}: resume failed: {err.decode()[-500:]}")


def run(kind: str, n: int, rng: random.Random, epochs: int, extra: list[str]) -> None:
    if n == 0:
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "job.yaml").write_text(JOB.replace("EPOCHS", str(epochs)))
        start = time.monotonic()
        proc = lamina(folder, "--set", "name=reference", *extra)
        _, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(err.decode()[-2000:])
        length = time.monotonic() - start
        want = weights(folder, "reference")
        exact = 0
        print(f"{kind}: uninterrupted run {length:.1f} s; {n} trials", flush=True)
        for k in range(n):
            kill_after = rng.uniform(0.3, 1.0) * length  # most after the first checkpoint
            checkpointed, resumes, name = trial(folder, f"t{k}", kill_after, extra)
            got = weights(folder, name)
            same = got.keys() == want.keys() and all(np.array_equal(got[key], want[key])
                                                     for key in want)
            exact += same
            if extra:
                time.sleep(4)  # the reaper's grace, then its sweep
            left = f"; Ray processes alive 4 s after: {ray_processes()}" if extra else ""
            how = "resumed" if checkpointed else "no checkpoint yet: started again"
            print(f"  trial {k:2d}: killed at {kill_after:5.1f} s ({how}, {resumes} run(s)), "
                  f"{'bit-identical' if same else 'DIFFERENT'}{left}", flush=True)
        print(f"{kind}: {exact} of {n} resumed runs bit-identical to the uninterrupted one",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--local", type=int, default=12)
    parser.add_argument("--distributed", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    run("local", args.local, rng, 6, [])
    run("distributed (2 workers, 2 servers, bsp)", args.distributed, rng, 5,
        ["--workers", "2", "--set", "distributed.servers=2"])


if __name__ == "__main__":
    main()
