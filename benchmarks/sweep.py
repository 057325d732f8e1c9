"""How the cost grows with the work: lamina eager and planned beside PyTorch, per size.

    python benchmarks/sweep.py [--threads 2] [--steps 10] [--rounds 2] [--json out.json]
        [--png out.png] [--points mlp/16 cnn/256 lstm:128 gpt:512 ...]

  batch size, 16 to 1024: the mlp and cnn training steps of benchmarks/workloads.py;
  sequence length, 32 to 512: the lstm workload (batch 32) and gpt (batch 8; its context
  grows with the length) of benchmarks/realistic.py.

A point is `name/batch` or `name:length`. Each framework runs each point in `rounds`
processes of its own, in an order that alternates as in benchmarks/run.py, its BLAS
threads pinned, the plan compiled as run.py compiles it (split over the threads where the
model allows; the toy workloads' tuned). Prints the median of each framework's steps, all
its processes together, and lamina's ratios to PyTorch's; the PNG draws the ratios
against the size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realistic  # noqa: E402
import workloads  # noqa: E402
from common import (  # noqa: E402
    import_torch,
    in_rounds,
    run_steps,
    split_compile,
    step_times,
)

BATCHES = [16, 64, 256, 1024]
LENGTHS = [32, 128, 512]
POINTS = ([f"{n}/{b}" for n in ("mlp", "cnn") for b in BATCHES]
          + [f"{n}:{t}" for n in ("lstm", "gpt") for t in LENGTHS])
FRAMEWORKS = ("eager", "planned", "torch")


def parse(point: str) -> tuple[str, int | None, int | None]:
    """(workload, batch size or None, sequence length or None)."""
    if "/" in point:
        name, size = point.split("/")
        return name, int(size), None
    name, length = point.split(":")
    return name, None, int(length)


def step(framework: str, point: str) -> Any:
    name, size, length = parse(point)
    threads = int(os.environ["OPENBLAS_NUM_THREADS"])
    if name in realistic.BATCH:
        t = import_torch(threads) if framework == "torch" else _lamina()
        plan = split_compile(t, threads, point) if framework == "planned" else None
        return realistic.train_step(t, name, size, plan, length)[0]
    if framework == "torch":
        import_torch(threads)
        from workloads_torch import torch_step

        return torch_step(name, size, length)
    return workloads.lamina_step(name, size, framework == "planned", threads, length)


def _lamina() -> Any:
    import lamina

    lamina.runtime.tune_process()  # as the Trainer and `lamina train` do
    return lamina


def measure(framework: str, point: str, steps: int) -> dict[str, list[float]]:
    run = step(framework, point)
    return {"ms": [t * 1e3 for t in step_times(run, steps, warmup=2)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10,
                        help="timed steps per framework and point, over all rounds")
    parser.add_argument("--rounds", type=int, default=2,
                        help="processes per framework and point, in alternating order")
    parser.add_argument("--points", nargs="+", default=POINTS)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--png", type=Path, default=None)
    parser.add_argument("--only", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure(*args.only, args.steps)))
        return
    print(f"threads={args.threads}, median of {args.steps} steps in {args.rounds} rounds, ms "
          "(lamina / PyTorch)")
    print(f"{'point':10s} {'eager':>9s} {'planned':>9s} {'torch':>9s} {'eager x':>8s} "
          f"{'planned x':>9s}")
    rows: dict[str, dict[str, float]] = {}
    processes: dict[str, dict[str, int]] = {}
    for point in args.points:
        runs = in_rounds(FRAMEWORKS, args.rounds, args.steps,
                         partial(run_steps, __file__, point, args.threads))
        rows[point] = {fw: float(np.median([m for r in rs for m in r["ms"]]))
                       for fw, rs in runs.items() if rs}
        processes[point] = {fw: len(rs) for fw, rs in runs.items() if rs}
        r = rows[point]
        ratios = (f"{r['eager'] / r['torch']:8.2f} {r['planned'] / r['torch']:9.2f}"
                  if "torch" in r else "")
        print(f"{point:10s} {r['eager']:9.2f} {r['planned']:9.2f} {r.get('torch', 0):9.2f} "
              f"{ratios}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "rows": rows,
                                         "processes": processes}, indent=1))
    if args.png:
        plot(rows, args.png)


def plot(rows: dict[str, dict[str, float]], path: Path) -> None:
    """One panel per workload: lamina eager and planned over PyTorch against the size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(parse(p)[0] for p in rows if "torch" in rows[p]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), squeeze=False)
    for ax, name in zip(axes[0], names):
        points = [p for p in rows if parse(p)[0] == name and "torch" in rows[p]]
        sizes = [parse(p)[1] or parse(p)[2] for p in points]
        for fw in ("eager", "planned"):
            ax.plot(sizes, [rows[p][fw] / rows[p]["torch"] for p in points], "o-", label=fw)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set(title=name, xlabel="batch" if parse(points[0])[1] else "sequence length",
               ylabel="lamina / PyTorch")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main()
