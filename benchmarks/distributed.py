"""Parameter-server round times and distributed throughput, beside local training.

    python benchmarks/distributed.py [--steps 20]

1. Push/pull round time (one pull, then one push of a full gradient) per worker, for
   1M and 10M float32 parameters, 1 and 2 workers, bsp and asp.
2. Samples/s of the MNIST-1D MLP job trained locally and with 1 and 2 workers (bsp).
A local Ray cluster is started here (2 CPUs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


class Pusher:
    """A stand-in worker: pulls the parameters and pushes a gradient of the same size."""

    def __init__(self, worker: int, server_name: str, namespace: str) -> None:
        import ray

        self.worker = worker
        self.server = ray.get_actor(server_name, namespace=namespace)
        self.counter = 0

    def rounds(self, n: int) -> list[float]:
        import ray

        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            _, params = ray.get(self.server.pull.remote(self.worker))
            grads = {k: np.zeros_like(v) for k, v in params.items()}
            tag = (self.counter, 0)  # (batch, step within the batch), as a worker sends
            ray.get(self.server.push.remote(self.worker, tag, grads))
            self.counter += 1
            times.append(time.perf_counter() - t0)
        return times


def round_times(size: int, workers: int, mode: str, steps: int) -> float:
    import ray

    from lamina.distributed import ParameterServer

    ns = f"bench-{size}-{workers}-{mode}"
    server = ray.remote(ParameterServer).options(name="s", namespace=ns, num_cpus=0).remote(
        0, {"type": "SGD", "lr": 0.0}, mode, 0, workers, 60.0, None, 1)
    ray.get(server.init_params.remote({"w": np.zeros(size, np.float32)}))
    pushers = [ray.remote(Pusher).options(num_cpus=0).remote(w, "s", ns) for w in range(workers)]
    results = ray.get([p.rounds.remote(steps) for p in pushers])
    for a in [*pushers, server]:
        ray.kill(a)
    return statistics.median(t for r in results for t in r[2:]) * 1e3


def job_throughput(workers: int | None, epochs: int, out_dir: Path) -> float:
    from lamina.jobs import train
    from lamina.train.jobfile import load_config

    sets = [f"trainer.epochs={epochs}", "trainer.progress=false", "scheduler=null",
            f"trainer.out_dir={out_dir}"]
    if workers:
        sets.append(f"distributed.workers={workers}")
    config = load_config(ROOT / "examples" / "mnist1d_mlp.yaml", sets)
    t0 = time.perf_counter()
    run, _ = train(config)
    return len(run.data.train.dataset) * epochs / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out-dir", type=Path, default=ROOT / "runs" / "bench",
                        help="where the timed jobs write their runs")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from lamina.distributed import init

    init(num_cpus=2)
    print("push/pull round time per worker (median ms)")
    print(f"{'parameters':>11s} {'workers':>8s} {'bsp':>8s} {'asp':>8s}")
    for size in (1_000_000, 10_000_000):
        for workers in (1, 2):
            bsp = round_times(size, workers, "bsp", args.steps)
            asp = round_times(size, workers, "asp", args.steps)
            print(f"{size:11,d} {workers:8d} {bsp:8.1f} {asp:8.1f}")
    print(f"\nMNIST-1D MLP job, {args.epochs} epochs (samples/s, end to end)")
    print(f"  local:     {job_throughput(None, args.epochs, args.out_dir):8.0f}")
    for workers in (1, 2):
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: "
              f"{job_throughput(workers, args.epochs, args.out_dir):8.0f}")
    os.environ.pop("RAY_ADDRESS", None)


if __name__ == "__main__":
    main()
