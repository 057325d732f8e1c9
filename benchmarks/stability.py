"""Whether a plan is as fast from one compile to the next: the same step compiled afresh
in separate processes.

    python benchmarks/stability.py [--threads 2] [--processes 10] [--steps 30]
        [--points mlp/256 cnn/64 lstm:50]

Each process compiles the planned step of the point (as benchmarks/sweep.py does: split
over the threads where the model allows, the toy workloads' tuned) and times it; the table
gives the median over processes, the fastest, the slowest, and the slowest over the
median. Tuning picks kernels by timing them, so a noisy moment during one compile can
leave a slower plan: that is what this measures. Beside it, as a control, the eager step
in as many processes, taking turns with the planned ones: it compiles nothing, so its
spread is the machine's own from process to process, which a plan's includes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_steps  # noqa: E402

SWEEP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--points", nargs="+", default=["mlp/256", "cnn/64", "lstm:50"])
    args = parser.parse_args()
    print(f"threads={args.threads}, {args.processes} compiles, each its own process, "
          f"median of {args.steps} steps, ms")
    print(f"{'point':10s} {'step':8s} {'median':>8s} {'fastest':>8s} {'slowest':>8s} "
          f"{'slowest x':>9s}")
    for point in args.points:
        times: dict[str, list[float]] = {"planned": [], "eager": []}
        for _ in range(args.processes):
            for framework, runs in times.items():
                ms = run_steps(SWEEP, point, args.threads, framework, args.steps)["ms"]
                runs.append(statistics.median(ms))
        for framework, runs in times.items():
            mid = statistics.median(runs)
            print(f"{point:10s} {framework:8s} {mid:8.2f} {min(runs):8.2f} {max(runs):8.2f} "
                  f"{max(runs) / mid:9.2f}   ({', '.join(f'{t:.1f}' for t in runs)})",
                  flush=True)


if __name__ == "__main__":
    main()
