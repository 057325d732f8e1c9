"""The standard workloads in lamina (eager and planned) and PyTorch, side by side.

    python benchmarks/run.py [--threads 2] [--steps 30] [--rounds 2] [--workloads mlp ...]
        [--no-inference] [--no-rbm] [--json out.json] [--png out.png]
    lamina bench                      # the same, from a source checkout

Training steps of the toy workloads (mlp, cnn, lstm, transformer: benchmarks/workloads.py)
and the realistic ones (resnet, gpt, lstm2: benchmarks/realistic.py), then batch-1
inference of each (`name@1`: eval mode, no gradients), then CD-1 training of an RBM
against scikit-learn's BernoulliRBM (benchmarks/rbm.py; where scikit-learn is installed).

Each framework runs each workload in its own process, its BLAS threads pinned, so none
pays for another's imports or allocator state; `--rounds` processes each (default 2),
their steps split between them and their order reversed from one round to the next
(eager, planned, torch, then torch, planned, eager), so that the machine slowing down
for a minute weighs on every framework alike. For each: median, p10 and p90 of the step
times of all its rounds together, samples/s, peak RSS of its largest process, and the
ratio of lamina's median to PyTorch's. The first losses are compared across frameworks
and processes: the same weights and data must give the same loss, or the comparison is
void. A planned row's plan is compiled once a process, the median compile time shown:
tuned for the toy workloads, with the default kernels for the realistic ones
(common.split_compile), each split over the threads where the model allows.

PyTorch's processes never load lamina, whose processes call lamina.runtime.tune_process()
as the Trainer and `lamina train` do, raising glibc's malloc thresholds for the whole
process (lamina/allocator.py): PyTorch runs as its users get it. To give every process
lamina's settings, export MALLOC_TRIM_THRESHOLD_=268435456 and
MALLOC_MMAP_THRESHOLD_=33554432 first. Every process runs a second of untimed steps
before it times any (SETTLE_S).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rbm  # noqa: E402
import realistic  # noqa: E402
import workloads  # noqa: E402
import workloads_torch  # noqa: E402
from common import (  # noqa: E402
    blas_line,
    cpu_name,
    fused_line,
    import_torch,
    in_rounds,
    run_steps,
    split_compile,
    step_times,
)

FRAMEWORKS = ("eager", "planned", "torch")
# Untimed steps a process runs first, for at least this long: over a step's first runs
# Python specializes its bytecode and the allocators fill, in all three frameworks, and a
# batch-1 row's median over a few dozen steps after two warm-up steps still held some of
# that start (benchmarks/RESULTS.md, session 60).
SETTLE_S = 1.0
# A batch-1 row of a toy workload takes a millisecond or two a step: more of them.
INFERENCE_STEPS = 4
TOYS = ["mlp", "cnn", "lstm", "transformer"]
WORKLOADS = [*TOYS, *realistic.BATCH]


def _framework(framework: str) -> Any:
    threads = int(os.environ["OPENBLAS_NUM_THREADS"])
    if framework == "torch":
        return import_torch(threads)
    import lamina

    lamina.runtime.tune_process()  # as the Trainer and `lamina train` do
    return lamina


def _step(framework: str, name: str, timing: dict[str, float]) -> tuple[Any, float, int]:
    """(step, the first loss or output sum to compare, batch size)."""
    t = _framework(framework)
    threads = int(os.environ["OPENBLAS_NUM_THREADS"])
    base, infer = name.removesuffix("@1"), name.endswith("@1")

    def timed(fn: Any) -> Any:  # a plan's compile, timed
        def compile_(*args: Any) -> Any:
            start = time.perf_counter()
            plan = fn(*args)
            timing["compile_s"] = time.perf_counter() - start
            return plan
        return compile_ if framework == "planned" else None

    if infer:
        plan = timed(lambda m, x: t.plan.compile(m, example_batch=(x,)))
        module = realistic if base in realistic.BATCH else workloads
        step, first = module.infer_step(t, base, plan)
        return step, first, 1
    if base in realistic.BATCH:
        plan = timed(split_compile(t, threads, name))
        step, first = realistic.train_step(t, base, plan=plan)
        return step, first, realistic.BATCH[base]
    if framework == "torch":
        step = workloads_torch.torch_step(base)
    else:
        start = time.perf_counter()
        step = workloads.lamina_step(base, planned=framework == "planned", threads=threads)
        if framework == "planned":
            timing["compile_s"] = time.perf_counter() - start
    return step, step(), workloads.DEFAULT_BATCH[base]  # the first step: also a warm-up


def measure(framework: str, name: str, steps: int, settle: float = SETTLE_S
            ) -> dict[str, Any]:
    timing: dict[str, float] = {}
    step, first, size = _step(framework, name, timing)
    ms = [t * 1e3 for t in step_times(step, steps, warmup=2, settle=settle)]
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"ms": ms, "size": size, "first_loss": first, "rss_mb": rss_kb / 1024, **timing}


def rows_in_rounds(name: str, threads: int, steps: int, rounds: int, settle: float = SETTLE_S
                   ) -> dict[str, dict | None]:
    """Each framework's row for workload `name`: `rounds` processes each, `steps` steps
    split between them, the frameworks' order reversed every other round."""
    run = partial(run_steps, __file__, name, threads, extra=("--settle", str(settle)))
    runs = in_rounds(FRAMEWORKS, rounds, steps, run)
    return {fw: summary(rs) if rs else None for fw, rs in runs.items()}


def summary(runs: list[dict]) -> dict[str, Any]:
    """One row from a framework's processes: statistics of all their steps together, the
    largest peak RSS, the median compile time; the first loss is the first process's (the
    losses of every process agree, or the row says so)."""
    ms = np.concatenate([r["ms"] for r in runs])
    median = float(np.median(ms))
    row = {"median": median, "p10": float(np.percentile(ms, 10)),
           "p90": float(np.percentile(ms, 90)), "first_loss": runs[0]["first_loss"],
           "samples_s": runs[0]["size"] / (median / 1e3),
           "rss_mb": max(r["rss_mb"] for r in runs), "processes": len(runs),
           "first_losses": [r["first_loss"] for r in runs]}
    if "compile_s" in runs[0]:
        row["compile_s"] = float(np.median([r["compile_s"] for r in runs]))
    return row


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30,
                        help="timed steps per framework and workload, over all rounds")
    parser.add_argument("--rounds", type=int, default=2,
                        help="processes per framework and workload, in alternating order")
    parser.add_argument("--settle", type=float, default=SETTLE_S,
                        help="seconds of untimed steps in each process before the timed ones")
    parser.add_argument("--workloads", nargs="+", default=WORKLOADS, choices=WORKLOADS)
    parser.add_argument("--no-inference", action="store_true",
                        help="leave out the batch-1 inference rows")
    parser.add_argument("--no-rbm", action="store_true",
                        help="leave out CD-1 training of an RBM against scikit-learn")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write every row, and the machine, as JSON")
    parser.add_argument("--png", type=Path, default=None,
                        help="also draw lamina / PyTorch per workload as a bar chart")
    parser.add_argument("--only", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only:
        print(json.dumps(measure(args.only[0], args.only[1], args.steps, args.settle)))
        return 0
    machine = (f"{cpu_name()}, {os.cpu_count()} cores, threads={args.threads}, "
               f"{args.steps} timed steps in {args.rounds} rounds; Python "
               f"{platform.python_version()}, NumPy {np.__version__}")
    print(machine)
    print(blas_line())
    print(fused_line())
    table: dict[str, dict[str, dict[str, float]]] = {}
    header = (f"{'workload':14s} {'framework':9s} {'median ms':>10s} {'p10':>7s} {'p90':>7s} "
              f"{'samples/s':>10s} {'RSS MB':>7s} {'vs torch':>8s} {'1st loss':>11s} "
              f"{'compile s':>9s}")
    print(header)
    ok = True
    names = [*args.workloads, *([] if args.no_inference else
                                [f"{n}@1" for n in args.workloads])]
    for name in names:
        steps = _steps(name, args.steps)
        rows = rows_in_rounds(name, args.threads, steps, args.rounds, args.settle)
        table[name] = {fw: r for fw, r in rows.items() if r is not None}
        torch = rows["torch"]
        for fw, r in rows.items():
            if r is None:
                continue
            ratio = f"{r['median'] / torch['median']:8.2f}" if torch else f"{'-':>8s}"
            compile_s = f"{r['compile_s']:9.2f}" if "compile_s" in r else f"{'':9s}"
            print(f"{name:14s} {fw:9s} {r['median']:10.2f} {r['p10']:7.2f} {r['p90']:7.2f} "
                  f"{r['samples_s']:10.0f} {r['rss_mb']:7.0f} {ratio} "
                  f"{r['first_loss']:11.5f} {compile_s}")
        losses = [loss for r in rows.values() if r is not None for loss in r["first_losses"]]
        if max(losses) - min(losses) > 1e-4 * max(1.0, abs(losses[0])):  # or output sums
            print(f"  first losses disagree: {losses}; the frameworks do not run the same step")
            ok = False
    rbm_rows = None
    if not args.no_rbm and importlib.util.find_spec("sklearn") is not None:
        rbm_rows = rbm.compare(args.threads, repeats=5)
        print(f"\n{rbm.TITLE}, median of 5 trainings")
        rbm.print_rows(rbm_rows)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "blas": blas_line(),
                                         "fused": fused_line(), "command": " ".join(sys.argv),
                                         "rows": table, "rbm": rbm_rows}, indent=1))
    if args.png:
        _bars(table, args.png, machine)
    return 0 if ok else 1


def _steps(name: str, steps: int) -> int:
    """Timed steps of a row, over all rounds: a realistic workload's training step takes
    a second, fewer of them tell as much; a toy's batch-1 step, a millisecond."""
    if name.endswith("@1"):
        return steps if name.removesuffix("@1") in realistic.BATCH else INFERENCE_STEPS * steps
    return min(steps, 10) if name in realistic.BATCH else steps


def _bars(table: dict[str, dict[str, dict[str, float]]], path: Path, machine: str) -> None:
    """lamina eager and planned median step over PyTorch's, one pair of bars a workload."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, rows in table.items() if "torch" in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(names)), 3.5))
    for k, fw in enumerate(("eager", "planned")):
        ratios = [table[n][fw]["median"] / table[n]["torch"]["median"] for n in names]
        ax.bar(np.arange(len(names)) + (k - 0.5) * 0.4, ratios, 0.4, label=f"lamina {fw}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(names)), names, rotation=45, ha="right")
    ax.set(ylabel="median step / PyTorch's", title=machine.split(";")[0])
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    sys.exit(main())
