"""Parameter-server round times and distributed throughput, beside local training.

    python benchmarks/distributed.py [--steps 8] [--sizes 1e6 1e7 1e8] [--workers 1 2 4]
        [--shards 1 2 4] [--json benchmarks/results/distributed.json]

1. Push/pull round time (one pull, then one push of a full gradient) per worker, for each
   parameter count, worker count and server-shard count, bsp (and asp on one shard).
2. Samples/s of the MNIST-1D MLP job trained locally and with 1 and 2 workers (bsp).
A local Ray cluster is started here (2 CPUs). The round times go to the JSON file, from
which benchmarks/scaling.py fits the scaling model in docs/guides/distributed.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


class Pusher:
    """A stand-in worker: pulls the parameters and pushes a gradient of the same size."""

    def __init__(self, worker: int, server_names: list[str], namespace: str) -> None:
        import ray

        self.worker = worker
        self.servers = [ray.get_actor(n, namespace=namespace) for n in server_names]
        self.counter = 0

    def rounds(self, n: int) -> list[float]:
        import ray

        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            replies = ray.get([s.pull.remote(self.worker) for s in self.servers])
            grads = [{k: np.zeros_like(v) for k, v in params.items()} for _, params in replies]
            tag = (self.counter, 0)  # (batch, step within the batch), as a worker sends
            ray.get([s.push.remote(self.worker, tag, g) for s, g in zip(self.servers, grads)])
            self.counter += 1
            times.append(time.perf_counter() - t0)
        return times


def round_times(size: int, workers: int, mode: str, steps: int, shards: int = 1) -> float:
    """Median round time (ms) per worker, `size` floats split evenly over `shards`."""
    import ray

    from lamina.distributed import ParameterServer

    ns = f"bench-{size}-{workers}-{mode}-{shards}"
    names = [f"s{i}" for i in range(shards)]
    servers = [ray.remote(ParameterServer).options(name=n, namespace=ns, num_cpus=0).remote(
        i, {"type": "SGD", "lr": 0.0}, mode, 0, workers, 120.0, None, 1)
        for i, n in enumerate(names)]
    ray.get([s.init_params.remote({"w": np.zeros(size // shards, np.float32)})
             for s in servers])
    pushers = [ray.remote(Pusher).options(num_cpus=0).remote(w, names, ns)
               for w in range(workers)]
    results = ray.get([p.rounds.remote(steps) for p in pushers])
    for a in [*pushers, *servers]:
        ray.kill(a)
    warm = min(2, steps - 1)  # the first rounds pay for starting the actors
    return statistics.median(t for r in results for t in r[warm:]) * 1e3


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
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7, 1e8])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--json", type=Path, default=None,
                        help="write the round times here (benchmarks/scaling.py reads them)")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "runs" / "bench",
                        help="where the timed jobs write their runs")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from lamina.distributed import init

    biggest = int(max(args.sizes)) * 4 * max(args.workers)  # bytes: a pull and a push each
    init(num_cpus=2, object_store_mb=max(512, 3 * biggest // 2**20))
    print("push/pull round time per worker (median ms); asp on one shard")
    print(f"{'parameters':>11s} {'workers':>8s} {'shards':>7s} {'bsp':>8s} {'asp':>8s}")
    points = []
    for size in (int(s) for s in args.sizes):
        steps = args.steps if size < 50_000_000 else max(3, args.steps // 2)
        for workers in args.workers:
            for shards in args.shards:
                bsp = round_times(size, workers, "bsp", steps, shards)
                asp = round_times(size, workers, "asp", steps) if shards == 1 else None
                points.append({"floats": size, "workers": workers, "shards": shards,
                               "bsp_ms": bsp, "asp_ms": asp})
                print(f"{size:11,d} {workers:8d} {shards:7d} {bsp:8.1f} "
                      f"{'' if asp is None else f'{asp:8.1f}'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": f"{os.cpu_count()} cores",
                                         "rounds": points}, indent=1))
    print(f"\nMNIST-1D MLP job, {args.epochs} epochs (samples/s, end to end)")
    print(f"  local:     {job_throughput(None, args.epochs, args.out_dir):8.0f}")
    for workers in (1, 2):
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: "
              f"{job_throughput(workers, args.epochs, args.out_dir):8.0f}")
    os.environ.pop("RAY_ADDRESS", None)


if __name__ == "__main__":
    main()
