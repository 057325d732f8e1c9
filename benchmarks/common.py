"""What every benchmark script shares: pinned threads, isolated processes, median timing."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads(n: int) -> None:
    """Pin BLAS threads in this process (before NumPy or torch start their pools)."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def step_times(step: Callable[[], Any], repeats: int, warmup: int = 3,
               settle: float = 0.0) -> list[float]:
    """Seconds taken by each of `repeats` calls of step, after `warmup` untimed ones and
    at least `settle` seconds of them."""
    start = time.perf_counter()
    for _ in range(warmup):
        step()
    while time.perf_counter() - start < settle:
        step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def median_seconds(step: Callable[[], Any], repeats: int, warmup: int = 3) -> float:
    return statistics.median(step_times(step, repeats, warmup))


def run_isolated(script: str, args: Sequence[str], threads: int,
                 optional_torch: bool = False) -> dict[str, Any] | None:
    """Run `script args` in a fresh process with pinned threads; parse its last line as
    JSON. Returns None when it needed torch and torch is not installed."""
    from lamina.thread_pools import BLAS_THREAD_TIMEOUT

    env = {**os.environ, **{v: str(threads) for v in THREAD_VARS}}
    # As under `lamina train`, which starts itself with lamina.runtime's BLAS setting;
    # these scripts load NumPy first.
    env.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        if optional_torch and "No module named 'torch'" in proc.stderr:
            return None
        raise RuntimeError(f"{script} {' '.join(args)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_steps(script: str, target: str, threads: int, framework: str, steps: int,
              extra: Sequence[str] = ()) -> dict[str, Any] | None:
    """`script --only framework target --steps steps *extra` in a fresh process
    (run_isolated): what run.py's and sweep.py's rows time, one framework's process at a
    time. None where the framework is PyTorch and PyTorch is not installed."""
    return run_isolated(script, ["--only", framework, target, "--steps", str(steps), *extra],
                        threads, optional_torch=framework == "torch")


def in_rounds(frameworks: Sequence[str], rounds: int, steps: int,
              run: Callable[[str, int], dict[str, Any] | None]) -> dict[str, list[dict]]:
    """Each framework's results from `rounds` processes, `run(framework, steps)` each
    (None where the framework is not installed), the `steps` split between them and the
    frameworks' order reversed every other round: this machine's speed drifts over
    minutes and differs from process to process, and one process per framework lets a
    slow one decide a ratio."""
    runs: dict[str, list[dict]] = {fw: [] for fw in frameworks}
    per_round = max(1, -(-steps // rounds))
    for r in range(rounds):
        for fw in frameworks if r % 2 == 0 else frameworks[::-1]:
            if r and not runs[fw]:  # not installed
                continue
            result = run(fw, per_round)
            if result is not None:
                runs[fw].append(result)
    return runs


def cpu_name() -> str:
    """The CPU's model name where the OS tells it (Linux), else the architecture: results
    from two machines differ more than those of two runs on one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fused_line() -> str:
    """Which kernels lamina's fused ops run (lamina/fused): numba's where it is installed
    and LAMINA_FUSED does not say numpy. Read without importing lamina or numba, so this
    process stays as PyTorch's users run it."""
    import importlib.metadata
    import importlib.util

    chosen = os.environ.get("LAMINA_FUSED", "").strip().lower() or "numba"
    if chosen == "numba" and importlib.util.find_spec("numba") is not None:
        return (f"lamina's fused kernels: numba {importlib.metadata.version('numba')} "
                "(LAMINA_FUSED=numpy for NumPy's)")
    return "lamina's fused kernels: NumPy's (pip install 'lamina[fast]' for numba's)"


def blas_line() -> str:
    """Which BLAS NumPy runs, with which kernels: a GEMM-bound step's time depends on it
    (this machine's AVX-512 kernels run GEMMs up to 2x faster than its AVX2 ones)."""
    import numpy  # noqa: F401 (loads the library threadpoolctl looks for)
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "NumPy's BLAS: unknown (pip install threadpoolctl to see it)"
    libs = [f"{i['internal_api']} {i.get('version') or ''} ({i.get('architecture') or '?'} "
            "kernels)" for i in threadpool_info() if i["user_api"] == "blas"]
    line = "NumPy's BLAS: " + (", ".join(libs) or "none found")
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    if pinned:
        line += (f"; OPENBLAS_CORETYPE={pinned} picks them (unset it, and OPENBLAS_L2_SIZE, for "
                 "the kernels OpenBLAS picks for this CPU)")
    return line + "; " + _mkl_part()


def _mkl_part() -> str:
    """Whether lamina's large products run on MKL (lamina/fused/mkl_blas.py), read without
    importing lamina: MKL installed, an Intel CPU, and LAMINA_BLAS not numpy."""
    import importlib.metadata

    try:
        version = importlib.metadata.version("mkl")
    except importlib.metadata.PackageNotFoundError:
        return "lamina's large products: NumPy's BLAS (MKL is not installed)"
    if os.environ.get("LAMINA_BLAS", "").strip().lower() == "numpy":
        return "lamina's large products: NumPy's BLAS (LAMINA_BLAS=numpy)"
    if "Intel" not in cpu_name():
        return "lamina's large products: NumPy's BLAS (MKL runs on Intel CPUs only)"
    return f"lamina's large products: MKL {version} (LAMINA_BLAS=numpy for NumPy's)"


def import_torch(threads: int) -> Any:
    """PyTorch, with `threads` threads, for a process that measures PyTorch alone. That
    process must not load lamina (nor this module load it): lamina's process tuning
    changes glibc's malloc settings for the whole process (lamina/runtime.py), which speeds
    PyTorch up too, and PyTorch is measured as its users run it."""
    if "lamina" in sys.modules:
        raise RuntimeError("lamina is loaded in PyTorch's benchmark process: its malloc "
                           "settings would change PyTorch's figures")
    import torch

    torch.set_num_threads(threads)
    return torch


def training(model: Any, opt: Any, loss_fn: Callable[..., Any], x: Any, y: Any,
             compiled: Callable[..., Any] | None = None) -> Callable[[], float]:
    """One training step (forward, loss, backward, update) returning the loss; through the
    compiled plan `compiled(x, y)` (which runs the backward itself) where given."""
    def step() -> float:
        if compiled is not None:
            loss = compiled(x, y)
        else:
            loss = loss_fn(model(x), y)
            loss.backward()
        opt.step()
        opt.zero_grad()
        return float(loss.item())

    return step


def inference(t: Any, model: Any, x: Any, plan: Callable[..., Any] | None
              ) -> tuple[Callable[[], Any], float]:
    """Batch-1 inference of `model` in framework `t` (eval mode, no gradients), planned by
    `plan(model, x)` if given, and its output's sum of squares (compared across
    frameworks)."""
    model.eval()
    compiled = plan(model, x) if plan is not None else None

    def step() -> Any:
        if compiled is not None:
            return compiled(x)
        with t.no_grad():
            return model(x)

    out = step()
    return step, float((out * out).sum().item())


def split_compile(t: Any, threads: int, name: str) -> Callable[..., Any]:
    """`compile(model, loss_fn, x, y)`: lamina's plan with its default kernels, the batch
    split over `threads` where the model allows (not with batch norm, nor where the
    split fails verification), else whole, saying so on stderr. Untuned: on the
    realistic workloads tuning found no kernel faster than the defaults, and the split,
    which is where their planned step gains, needs none (benchmarks/RESULTS.md)."""
    def compile_(model: Any, loss_fn: Any, x: Any, y: Any) -> Any:
        try:
            return t.plan.compile(model, loss_fn, (x, y), threads=threads)
        except t.plan.TraceError as e:  # a batch this model cannot split over threads
            print(f"{name}: one thread ({e})", file=sys.stderr)
        # Outside the handler: its traceback holds the split's programs until it ends.
        return t.plan.compile(model, loss_fn, (x, y))

    return compile_
