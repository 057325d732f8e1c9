"""How close each workload's step already runs to this machine's peak: the floor under any
framework's time, and what each target of benchmarks/run.py's table asks of the machine.

    python benchmarks/roofline.py [--bench benchmarks/results/bench.json] [--threads 2]
        [--workloads mlp cnn ... lstm2]

For each workload of run.py, training step and batch-1 inference: the floating-point
operations of PyTorch's step (torch.utils.flop_counter over its matrix products,
convolutions and attention, forward and backward; an LSTM layer's, which PyTorch runs as
one oneDNN op the counter does not see, added from its shapes), and the floor, those operations at
the machine's peak: the best rate of a large float32 GEMM on NumPy's BLAS, the fastest
kernel this machine has. Then, from a run.py JSON, PyTorch's median time and the share
of the peak it reaches, and the target of issue 34's table: the time it allows lamina
and the share of the peak that time needs. A share over 100% cannot be met by doing the
same operations; lamina can only meet it by doing fewer (Winograd's 3x3 convolutions do
2.25x fewer multiplications, so the resnet rows' floor is lower for lamina than shown).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realistic  # noqa: E402
import workloads  # noqa: E402
from common import import_torch, run_isolated  # noqa: E402

TOYS = ["mlp", "cnn", "lstm", "transformer"]
# issue 34's targets, lamina / PyTorch median: (eager, planned)
TARGETS = {"mlp": (1.0, 0.9), "cnn": (0.9, 0.6), "lstm": (1.2, 0.9), "lstm2": (1.2, 0.9),
           "transformer": (1.2, 0.9), "gpt": (1.2, 0.9), "resnet": (1.3, 1.0)}
INFERENCE_TARGETS = (1.0, 0.7)


def peak_gflops(size: int = 2048, repeats: int = 8) -> float:
    """The best rate of a size x size float32 GEMM, GFLOP/s."""
    a, b = (np.random.default_rng(k).random((size, size), np.float32) for k in (0, 1))
    out = np.empty_like(a)
    np.matmul(a, b, out=out)
    best = min(_seconds(lambda: np.matmul(a, b, out=out)) for _ in range(repeats))
    return 2 * size**3 / best / 1e9


def _seconds(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def lstm_flops(torch: Any, model: Any, x: Any, train: bool) -> int:
    """The operations of every nn.LSTM in model over input x (B, T) of token ids: per
    layer and direction, 2 T B 4H (I + H) for the gates' products; backward does twice
    that (the inputs' gradients and the weights')."""
    total = 0
    batch, steps = x.shape[:2]
    for m in model.modules():
        if isinstance(m, torch.nn.LSTM):
            h, dirs = m.hidden_size, 2 if m.bidirectional else 1
            for k in range(m.num_layers):
                width = m.input_size if k == 0 else h * dirs
                total += dirs * 2 * steps * batch * 4 * h * (width + h)
    return total * (3 if train else 1)


def count(name: str) -> float:
    """GFLOP of PyTorch's step for `name` (`base@1`: batch-1 inference)."""
    torch = import_torch(int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
    from torch.utils.flop_counter import FlopCounterMode

    base, infer = name.removesuffix("@1"), name.endswith("@1")
    realistic_ = base in realistic.BATCH
    if infer:
        if realistic_:
            model = realistic.build(torch, base)[0]
            x = torch.tensor(realistic.data(base, 1)[0])
        else:
            from workloads_torch import torch_model

            model, x = torch_model(base), torch.tensor(workloads.batch(base, 1)[0])
        model.eval()

        def step() -> Any:
            with torch.no_grad():
                return model(x)
    elif realistic_:
        model, opt, loss_fn = realistic.build(torch, base)
        x, y = (torch.tensor(a) for a in realistic.data(base))

        def step() -> Any:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
    else:
        from workloads_torch import torch_model, torch_step

        step, model = torch_step(base), torch_model(base)
        x = torch.tensor(workloads.batch(base)[0])
    with FlopCounterMode(display=False, custom_mapping=_cpu_attention(torch)) as counter:
        step()
    flops = counter.get_total_flops()
    if x.dim() == 2 and not x.is_floating_point():  # token ids: the LSTMs the counter misses
        flops += lstm_flops(torch, model, x, train=not infer)
    return flops / 1e9


def _cpu_attention(torch: Any) -> dict[Any, Any]:
    """Formulas for the CPU kernels of scaled_dot_product_attention, which the counter
    has for the GPU's only: the same counts, from the same shapes."""
    from torch.utils import flop_counter as fc

    aten = torch.ops.aten

    def forward(q: Any, k: Any, v: Any, *args: Any, out_shape: Any = None, **kw: Any) -> int:
        return fc.sdpa_flop_count(q, k, v)

    def backward(gy: Any, q: Any, k: Any, v: Any, *args: Any, out_shape: Any = None,
                 **kw: Any) -> int:
        return fc.sdpa_backward_flop_count(gy, q, k, v)

    return {aten._scaled_dot_product_flash_attention_for_cpu: forward,
            aten._scaled_dot_product_flash_attention_for_cpu_backward: backward}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=None,
                        help="a JSON written by run.py --json: PyTorch's and lamina's times")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workloads", nargs="+", default=[*TOYS, *realistic.BATCH],
                        choices=[*TOYS, *realistic.BATCH])
    parser.add_argument("--only", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only:
        what, name = args.only
        print(json.dumps({"gflops": peak_gflops() if what == "peak" else count(name)}))
        return 0
    names = [*args.workloads, *(f"{n}@1" for n in args.workloads)]
    peak = run_isolated(__file__, ["--only", "peak", "-"], args.threads)["gflops"]
    rows = json.loads(args.bench.read_text())["rows"] if args.bench else {}
    print(f"peak: {peak:.0f} GFLOP/s (float32 GEMM 2048, NumPy's BLAS, {args.threads} threads)")
    print(f"{'workload':14s} {'GFLOP':>9s} {'floor ms':>9s} {'torch ms':>9s} {'torch %':>8s}"
          f" {'eager %':>8s} {'planned %':>9s}  {'targets need % of peak (eager, planned)'}")
    for name in names:
        flops = run_isolated(__file__, ["--only", "count", name], args.threads,
                             optional_torch=True)
        if flops is None:
            print("PyTorch is not installed: it counts the operations")
            return 1
        floor = flops["gflops"] / peak * 1e3
        line = f"{name:14s} {flops['gflops']:9.5f} {floor:9.3f}"
        row = rows.get(name, {})
        if "torch" in row:
            torch_ms = row["torch"]["median"]
            shares = [100 * floor / row[fw]["median"] if fw in row else float("nan")
                      for fw in ("eager", "planned")]
            targets = (INFERENCE_TARGETS if name.endswith("@1")
                       else TARGETS[name.removesuffix("@1")])
            needs = ", ".join(f"{100 * floor / (t * torch_ms):.0f}%" for t in targets)
            line += (f" {torch_ms:9.2f} {100 * floor / torch_ms:7.0f}% {shares[0]:7.0f}%"
                     f" {shares[1]:8.0f}%  {needs}")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
