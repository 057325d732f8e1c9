"""The recurrent layers alone, lamina against PyTorch: LSTM and GRU, each framework in its
own process.

    python benchmarks/recurrent.py [--threads 2] [--repeats 20] [--length 50] [--batch 32]

For `nn.LSTM(128, 256)` and `nn.GRU(128, 256)` over a time-major (T, B, 128) input, the
same weights in both frameworks: the median time of forward + backward (a fixed output
gradient, the weight gradients zeroed between steps) and of inference (`no_grad`), and
the ratio lamina / PyTorch. The outputs' sums of squares are printed beside the times:
the same weights and input must give the same output, or the comparison is void.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import import_torch, median_seconds, pin_threads, run_isolated  # noqa: E402

LAYERS = ("LSTM", "GRU")
FEATURES, HIDDEN = 128, 256


def steps(t: Any, kind: str, length: int, batch: int
          ) -> tuple[Callable[[], None], Callable[[], None], float]:
    """(training step, inference step, the output's sum of squares) in framework t."""
    rng = np.random.default_rng(0)
    layer = getattr(t.nn, kind)(FEATURES, HIDDEN)
    with t.no_grad():
        for p in layer.parameters():  # the same weights in both frameworks, by order
            p.copy_(t.tensor(rng.uniform(-0.0625, 0.0625, tuple(p.shape)).astype(np.float32)))
    x = t.tensor(rng.standard_normal((length, batch, FEATURES)).astype(np.float32))
    gy = t.tensor(rng.standard_normal((length, batch, HIDDEN)).astype(np.float32))

    def train() -> None:
        out, _ = layer(x)
        out.backward(gy)
        for p in layer.parameters():
            p.grad = None

    def infer() -> None:
        with t.no_grad():
            layer(x)

    with t.no_grad():
        out, _ = layer(x)
    return train, infer, float((out * out).sum().item())


def measure(framework: str, repeats: int, length: int, batch: int) -> dict[str, float]:
    """Median milliseconds of both steps of each layer, in this process."""
    if framework == "lamina":
        import lamina as t

        t.runtime.tune_process()
    else:
        import torch as t
    result = {}
    for kind in LAYERS:
        train, infer, check = steps(t, kind, length, batch)
        result[f"{kind}_train_ms"] = median_seconds(train, repeats) * 1e3
        result[f"{kind}_infer_ms"] = median_seconds(infer, repeats) * 1e3
        result[f"{kind}_check"] = check
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--length", type=int, default=50)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--only", choices=["lamina", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_threads(args.threads)
    if args.only:
        if args.only == "torch":
            import_torch(args.threads)
        print(json.dumps(measure(args.only, args.repeats, args.length, args.batch)))
        return
    common = ["--threads", str(args.threads), "--repeats", str(args.repeats),
              "--length", str(args.length), "--batch", str(args.batch)]
    ours = run_isolated(__file__, ["--only", "lamina", *common], args.threads)
    theirs = run_isolated(__file__, ["--only", "torch", *common], args.threads,
                          optional_torch=True)
    print(f"T={args.length} B={args.batch} {FEATURES}->{HIDDEN}, threads={args.threads}, "
          f"repeats={args.repeats} (each framework in its own process)")
    print(f"{'layer':6s} {'step':18s} {'lamina ms':>10s} {'pytorch ms':>11s} {'ratio':>6s}"
          f"  {'output sum of squares (lamina, pytorch)'}")
    for kind in LAYERS:
        check = f"{ours[f'{kind}_check']:.6g}, " + (
            f"{theirs[f'{kind}_check']:.6g}" if theirs else "-")
        for step, key in (("forward + backward", "train"), ("inference", "infer")):
            mine = ours[f"{kind}_{key}_ms"]
            other = theirs[f"{kind}_{key}_ms"] if theirs else None
            ratio = f"{mine / other:6.2f}" if other else f"{'-':>6s}"
            other_text = f"{other:11.2f}" if other else f"{'-':>11s}"
            print(f"{kind:6s} {step:18s} {mine:10.2f} {other_text} {ratio}  {check}")


if __name__ == "__main__":
    main()
