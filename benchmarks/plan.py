"""Execution plans against eager lamina and eager PyTorch on the standard workloads.

    python benchmarks/plan.py [--threads 2] [--repeats 20] [--rounds 3] [--cases cnn/64 ...]

For each workload prints, each framework in its own process with its threads pinned:
  * memory held for backward: the bytes alive at the end of the forward pass, measured
    with tracemalloc (which sees NumPy's allocations) and counting a plan's preallocated
    buffers. Eager mode keeps every op's inputs until backward; a plan keeps what backward
    reads. Also the plan's own estimate of its live peak (`plan.memory()`);
  * median step time of lamina eager, lamina planned (tuned, `threads` as given: the
    tuner keeps the batch split over threads or whole, whichever is faster) and PyTorch
    eager, and the ratios. Eager and planned steps alternate within one process, since one process
    differs from the next by 10-30% on a shared machine; lamina's and PyTorch's
    processes run round-robin, `--rounds` each, and the medians over rounds are shown;
  * planned over eager: the median over rounds of each process's ratio, and its range;
  * for the MLP, a floor: the same step written by hand in NumPy (the fewest calls, into
    preallocated arrays; workloads.numpy_mlp_step), alternating with the other two. Its
    first loss must equal theirs.
PyTorch's processes never load lamina, so they keep glibc's default malloc settings (see
benchmarks/run.py).
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
import workloads_torch  # noqa: E402
from common import blas_line, import_torch, run_isolated, step_times  # noqa: E402

CASES = [("mlp", 32), ("mlp", 128), ("cnn", 64), ("lstm", 32)]
BLOCK = 10  # steps per block when eager and planned alternate; the first two untimed
# A planned step split over threads (compile(threads=2)) holds BLAS to one thread; after
# an eager step's multi-threaded GEMMs, OpenBLAS's idle threads may spin for ~0.1 s on
# the cores its slices need (unless OPENBLAS_THREAD_TIMEOUT is short, as run_isolated
# sets it). A training loop never switches, so each block starts untimed for this long.
SETTLE = 0.25


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


def interleaved_ms(steps: list, repeats: int, block: int = BLOCK) -> list[float]:
    """Median ms of each step, run in alternating blocks within one process: the steps
    share whatever state the process and machine are in, which differs by 10-30% from one
    process to the next here (more than the difference being measured). The first two
    steps of a block, and at least SETTLE seconds, are not timed: two models' weights,
    gradients and momenta do not fit in L3 together, and a step right after the other
    model's pays to refill the cache (and to wait out spinning BLAS threads), which a
    process training one model never does."""
    for step in steps:
        step_times(step, 0, warmup=5)
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(max(1, repeats // (block - 2))):
        for step, ts in zip(steps, times):
            ts.extend(step_times(step, block - 2, warmup=2, settle=SETTLE))
    return [statistics.median(ts) * 1e3 for ts in times]


def measure(framework: str, name: str, size: int, repeats: int) -> dict[str, float]:
    if framework == "torch":
        import_torch(int(os.environ.get("OMP_NUM_THREADS", "2")))
        return {"torch_ms": interleaved_ms([workloads_torch.torch_step(name, size)], repeats)[0]}
    import lamina as lm

    threads = int(os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    steps = [workloads.lamina_step(name, size, planned, threads) for planned in (False, True)]
    if name == "mlp":
        steps.append(workloads.numpy_mlp_step(size))
        losses = [step() for step in steps]  # same weights, same batch: same first loss
        if max(losses) - min(losses) > 1e-5 * abs(losses[0]):
            raise RuntimeError(f"mlp/{size}: eager, planned and NumPy losses differ: {losses}")
    eager_ms, planned_ms, *numpy_ms = interleaved_ms(steps, repeats)
    model, loss_fn = workloads.lamina_model(name), workloads.lamina_loss(name)
    x, y = (lm.tensor(a) for a in workloads.batch(name, size))
    return {"eager_ms": eager_ms, "planned_ms": planned_ms,
            **({"numpy_ms": numpy_ms[0]} if numpy_ms else {}),
            "eager_peak": held_for_backward(name, size, False),
            "planned_peak": held_for_backward(name, size, True),
            **lm.plan.compile(model, loss_fn, (x, y)).memory()}


def run(framework: str, name: str, size: int, threads: int, repeats: int) -> dict | None:
    return run_isolated(__file__, ["--only", framework, name, str(size), "--repeats",
                                   str(repeats)], threads, optional_torch=framework == "torch")


def _medians(rounds: list[dict | None]) -> dict | None:
    """The first round's figures with each step time's median over all rounds."""
    if rounds[0] is None:
        return None
    return {**rounds[0], **{k: statistics.median(r[k] for r in rounds)
                            for k in rounds[0] if k.endswith("_ms")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3,
                        help="processes per framework and workload, run round-robin")
    parser.add_argument("--cases", nargs="+", default=[f"{n}/{b}" for n, b in CASES],
                        choices=[f"{n}/{b}" for n, b in CASES], metavar="WORKLOAD/BATCH",
                        help="the cases to run (default: all)")
    parser.add_argument("--only", nargs=3, metavar=("FRAMEWORK", "WORKLOAD", "BATCH"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        framework, name, size = args.only
        print(json.dumps(measure(framework, name, int(size), args.repeats)))
        return
    print(f"threads={args.threads} repeats={args.repeats} rounds={args.rounds}; lamina eager "
          f"and planned (compile(..., tune=True)) alternate in blocks of {BLOCK} steps in one "
          "process, PyTorch runs in its own")
    print(blas_line())
    print(f"{'workload':10s} {'eager MB':>9s} {'plan MB':>8s} {'ratio':>6s} {'plan est':>9s} "
          f"{'eager ms':>9s} {'plan ms':>8s} {'torch ms':>9s} {'numpy ms':>9s} "
          f"{'plan/eager':>10s} {'(range)':>11s} {'plan/torch':>10s} {'plan/numpy':>10s}")
    for name, size in (c for c in CASES if f"{c[0]}/{c[1]}" in args.cases):
        # Round-robin lamina's and torch's processes and take medians over the rounds.
        rounds = [[run(f, name, size, args.threads, args.repeats) for f in ("lamina", "torch")]
                  for _ in range(args.rounds)]
        lam, torch = (_medians([r[i] for r in rounds]) for i in range(2))
        # Eager and planned share each process, so their ratio per process is steadier
        # than either time; its range over the rounds shows what the noise allows.
        ratios = [r[0]["planned_ms"] / r[0]["eager_ms"] for r in rounds]
        mb = 1 / 2**20
        torch_ms = torch["torch_ms"] if torch else None
        numpy_ms = lam.get("numpy_ms")
        print(f"{name + '/' + str(size):10s} {lam['eager_peak'] * mb:9.1f} "
              f"{lam['planned_peak'] * mb:8.1f} {lam['planned_peak'] / lam['eager_peak']:6.2f} "
              f"{lam['bytes_with_reuse'] * mb:9.1f} {lam['eager_ms']:9.2f} "
              f"{lam['planned_ms']:8.2f} {_cell(torch_ms, 9)} {_cell(numpy_ms, 9)} "
              f"{statistics.median(ratios):10.2f} {min(ratios):5.2f}-{max(ratios):<5.2f} "
              f"{_cell(torch_ms and lam['planned_ms'] / torch_ms, 10)} "
              f"{_cell(numpy_ms and lam['planned_ms'] / numpy_ms, 10)}")


def _cell(value: float | None, width: int) -> str:
    return f"{value:{width}.2f}" if value is not None else f"{'-':>{width}s}"


if __name__ == "__main__":
    main()
