"""Execution plans against eager lamina and eager PyTorch on the standard workloads.

    python benchmarks/plan.py [--threads 2] [--repeats 20] [--rounds 3]

For each workload prints, each framework in its own process with its threads pinned:
  * memory held for backward: the bytes alive at the end of the forward pass, measured
    with tracemalloc (which sees NumPy's allocations) and counting a plan's preallocated
    buffers. Eager mode keeps every op's inputs until backward; a plan keeps what backward
    reads. Also the plan's own estimate of its live peak (`plan.memory()`);
  * median step time of lamina eager, lamina planned (tuned) and PyTorch eager, and the
    ratios; the three run round-robin, `--rounds` processes each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402
from common import median_seconds, run_isolated  # noqa: E402

CASES = [("mlp", 32), ("mlp", 128), ("cnn", 64), ("lstm", 32)]


def median_ms(step, repeats: int) -> float:
    return median_seconds(step, repeats) * 1e3


def held_for_backward(name: str, size: int, planned: bool) -> int:
    held: list[int] = []

    def probe() -> None:
        if tracemalloc.is_tracing():
            held.append(tracemalloc.get_traced_memory()[0])

    run, kept, model = workloads.lamina_forward_backward(name, size, planned, probe)
    run()  # lazily made arrays exist before measuring
    model.zero_grad()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    run()
    tracemalloc.stop()
    return held[0] - base + kept


def measure(framework: str, name: str, size: int, repeats: int) -> dict[str, float]:
    if framework == "torch":
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
        return {"ms": median_ms(workloads.torch_step(name, size), repeats)}
    planned = framework == "planned"
    out = {"ms": median_ms(workloads.lamina_step(name, size, planned), repeats),
           "peak": held_for_backward(name, size, planned)}
    if planned:
        import lamina as lm

        model, loss_fn = workloads.lamina_model(name), workloads.lamina_loss(name)
        x, y = (lm.tensor(a) for a in workloads.batch(name, size))
        out.update(lm.plan.compile(model, loss_fn, (x, y)).memory())
    return out


FRAMEWORKS = ("eager", "planned", "torch")


def _median_ms(results: list[dict | None]) -> dict | None:
    """The first round's figures with the median step time over all rounds."""
    if results[0] is None:
        return None
    return {**results[0], "ms": statistics.median(r["ms"] for r in results)}


def run(framework: str, name: str, size: int, threads: int, repeats: int) -> dict | None:
    return run_isolated(__file__, ["--only", framework, name, str(size), "--repeats",
                                   str(repeats)], threads, optional_torch=framework == "torch")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3,
                        help="processes per framework and workload, run round-robin")
    parser.add_argument("--only", nargs=3, metavar=("FRAMEWORK", "WORKLOAD", "BATCH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        framework, name, size = args.only
        print(json.dumps(measure(framework, name, int(size), args.repeats)))
        return
    print(f"threads={args.threads} repeats={args.repeats} rounds={args.rounds}; each framework "
          "in its own process; planned = compile(..., tune=True)")
    print(f"{'workload':10s} {'eager MB':>9s} {'plan MB':>8s} {'ratio':>6s} {'plan est':>9s} "
          f"{'eager ms':>9s} {'plan ms':>8s} {'torch ms':>9s} {'plan/eager':>10s} "
          f"{'plan/torch':>10s}")
    for name, size in CASES:
        # Round-robin the three processes and take each one's median over the rounds: a
        # shared machine drifts by tens of percent over a minute, which would otherwise
        # land on whichever framework ran during the slow spell.
        rounds = [[run(f, name, size, args.threads, args.repeats) for f in FRAMEWORKS]
                  for _ in range(args.rounds)]
        eager, planned, torch = (_median_ms([r[i] for r in rounds]) for i in range(3))
        mb = 1 / 2**20
        t_ms = f"{torch['ms']:9.2f}" if torch else f"{'-':>9s}"
        t_ratio = f"{planned['ms'] / torch['ms']:10.2f}" if torch else f"{'-':>10s}"
        print(f"{name + '/' + str(size):10s} {eager['peak'] * mb:9.1f} {planned['peak'] * mb:8.1f} "
              f"{planned['peak'] / eager['peak']:6.2f} {planned['bytes_with_reuse'] * mb:9.1f} "
              f"{eager['ms']:9.2f} {planned['ms']:8.2f} {t_ms} "
              f"{planned['ms'] / eager['ms']:10.2f} {t_ratio}")


if __name__ == "__main__":
    main()
