"""The standard workloads in lamina (eager and planned) and PyTorch, side by side.

    python benchmarks/run.py [--threads 2] [--steps 30] [--workloads mlp cnn lstm transformer]
    lamina bench                      # the same, from a source checkout

Each framework runs each workload in its own process, its BLAS threads pinned, so none
pays for another's imports or allocator state. For each: median, p10 and p90 step time,
samples/s, peak RSS of the process, and the ratio of lamina's median to PyTorch's. The
first losses are compared across frameworks: the same weights and data must give the
same loss, or the comparison is void.

PyTorch's processes never load lamina, whose import raises glibc's malloc thresholds for
the whole process (lamina/allocator.py): PyTorch runs as its users get it. To give every
process lamina's settings, export MALLOC_TRIM_THRESHOLD_=268435456 and
MALLOC_MMAP_THRESHOLD_=33554432 first.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402
from common import blas_line, import_torch, run_isolated, step_times  # noqa: E402

FRAMEWORKS = ("eager", "planned", "torch")


def measure(framework: str, name: str, steps: int) -> dict[str, float]:
    if framework == "torch":
        import_torch(int(os.environ["OMP_NUM_THREADS"]))
        step = workloads.torch_step(name)
    else:
        step = workloads.lamina_step(name, planned=framework == "planned",
                                     threads=int(os.environ["OPENBLAS_NUM_THREADS"]))
    first = step()  # the first loss, compared across frameworks; also the first warm-up
    ms = np.array(step_times(step, steps, warmup=2)) * 1e3
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"median": float(np.median(ms)), "p10": float(np.percentile(ms, 10)),
            "p90": float(np.percentile(ms, 90)), "first_loss": first,
            "samples_s": workloads.DEFAULT_BATCH[name] / (float(np.median(ms)) / 1e3),
            "rss_mb": rss_kb / 1024}


def in_process(framework: str, name: str, threads: int, steps: int) -> dict | None:
    return run_isolated(__file__, ["--only", framework, name, "--steps", str(steps)], threads,
                        optional_torch=framework == "torch")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workloads", nargs="+", default=["mlp", "cnn", "lstm", "transformer"],
                        choices=["mlp", "cnn", "lstm", "transformer"])
    parser.add_argument("--only", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only:
        print(json.dumps(measure(args.only[0], args.only[1], args.steps)))
        return 0
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"threads={args.threads}, {args.steps} timed steps; Python "
          f"{platform.python_version()}, NumPy {np.__version__}")
    print(blas_line())
    header = (f"{'workload':9s} {'framework':9s} {'median ms':>10s} {'p10':>7s} {'p90':>7s} "
              f"{'samples/s':>10s} {'RSS MB':>7s} {'vs torch':>8s} {'1st loss':>9s}")
    print(header)
    ok = True
    for name in args.workloads:
        rows = {fw: in_process(fw, name, args.threads, args.steps) for fw in FRAMEWORKS}
        torch = rows["torch"]
        for fw, r in rows.items():
            if r is None:
                continue
            ratio = f"{r['median'] / torch['median']:8.2f}" if torch else f"{'-':>8s}"
            print(f"{name:9s} {fw:9s} {r['median']:10.2f} {r['p10']:7.2f} {r['p90']:7.2f} "
                  f"{r['samples_s']:10.0f} {r['rss_mb']:7.0f} {ratio} {r['first_loss']:9.5f}")
        losses = [r["first_loss"] for r in rows.values() if r is not None]
        if max(losses) - min(losses) > 1e-4 * max(1.0, abs(losses[0])):
            print(f"  first losses disagree: {losses}; the frameworks do not run the same step")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
