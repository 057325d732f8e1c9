"""Whether a plan is as fast from one compile to the next: the same step compiled afresh
in separate processes.

    python benchmarks/stability.py [--threads 2] [--processes 10] [--steps 30]
        [--points mlp/256 cnn/64 lstm:50]

Each process compiles the planned step of the point (as benchmarks/sweep.py does: split
over the threads where the model allows, the toy workloads' tuned) and times it; the table
gives the median over processes, the slowest, and the slowest over the median. Tuning
picks kernels by timing them, so a noisy moment during one compile can leave a slower
plan: that is what this measures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_isolated  # noqa: E402

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
    print(f"{'point':10s} {'median':>8s} {'fastest':>8s} {'slowest':>8s} {'slowest x':>9s}")
    for point in args.points:
        times = [statistics.median(run_isolated(
            SWEEP, ["--only", "planned", point, "--steps", str(args.steps)], args.threads)["ms"])
            for _ in range(args.processes)]
        mid = statistics.median(times)
        print(f"{point:10s} {mid:8.2f} {min(times):8.2f} {max(times):8.2f} "
              f"{max(times) / mid:9.2f}   ({', '.join(f'{t:.1f}' for t in times)})",
              flush=True)


if __name__ == "__main__":
    main()
