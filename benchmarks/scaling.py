"""The scaling model of BSP parameter-server training, from measured round times.

    python benchmarks/distributed.py --json benchmarks/results/distributed.json
    python benchmarks/scaling.py [--json ...] [--plot docs/guides/scaling.png]

1. Fits the round time measured here as T = latency + per_shard * shards + cost * workers
   * bytes. On one machine every actor shares its 2 cores and every byte crosses Ray's
   object store, not a network: a round's time is the CPU work of serialising every
   worker's pull and push, once on the worker's side and once on a shard's, whatever
   the shards. Half of `cost * cores` is each side's CPU time per byte.
2. Measures a training step of the `resnet` (batch 32) and `gpt` (batch 8) workloads
   (benchmarks/models.py, lamina eager, one process).
3. Predicts samples/s on a cluster of one worker per node, each computing as this
   machine does, for 1-32 workers and 1-8 shards: a BSP step is the compute plus one
   round, and a round is the fitted latency and serialisation plus the slower of the
   links: a worker's (pull + push of every parameter) or a shard's (its part, to and
   from every worker), at `--gbits` per node. The limit of each point is named: compute,
   the workers' network or the servers' network.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORKERS, SHARDS = (1, 2, 4, 8, 16, 32), (1, 2, 4, 8)


def fit(rounds: list[dict[str, Any]], cores: int) -> dict[str, float]:
    """Least squares of the BSP round times: latency and per-shard latency (s), and each
    side's CPU time per byte (s/byte)."""
    b = np.array([4.0 * r["floats"] for r in rounds])
    k = np.array([float(r["shards"]) for r in rounds])
    w = np.array([float(r["workers"]) for r in rounds])
    t = np.array([r["bsp_ms"] / 1e3 for r in rounds])
    design = np.stack([np.ones_like(b), k, w * b], axis=1)
    # relative errors matter (the times span three orders): weight each row by 1 / t
    coef, *_ = np.linalg.lstsq(design / t[:, None], np.ones_like(t), rcond=None)
    predicted = design @ coef
    return {"latency_s": float(coef[0]), "per_shard_s": float(coef[1]),
            "side_s_per_byte": float(coef[2]) * cores / 2,
            "max_rel_error": float(np.max(np.abs(predicted - t) / t)),
            "median_rel_error": float(np.median(np.abs(predicted - t) / t))}


def step_time(name: str, steps: int = 3) -> dict[str, float]:
    """Seconds per training step of a realistic workload (benchmarks/realistic.py: forward,
    loss, backward, update), its batch, and its parameters."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import realistic
    from common import median_seconds, training

    import lamina as lm

    model, opt, loss_fn = realistic.build(lm, name)
    x, y = (lm.tensor(a) for a in realistic.data(name))
    step_s = median_seconds(training(model, opt, loss_fn, x, y), steps, warmup=1)
    n = sum(p.numel() for p in model.parameters())
    return {"step_s": step_s, "batch": realistic.BATCH[name], "floats": n}


def predict(model: dict[str, float], work: dict[str, float], workers: int, shards: int,
            gbits: float) -> tuple[float, str]:
    """(samples/s, limit) of one BSP configuration."""
    nbytes, link = 4.0 * work["floats"], gbits * 1e9 / 8
    worker_net = 2 * nbytes / link
    server_net = 2 * nbytes * workers / shards / link
    # each side serialises what it sends and receives on its own cores: a worker all of
    # it, a shard its part of every worker's
    serialise = 2 * nbytes * model["side_s_per_byte"] * max(1.0, workers / shards)
    round_s = (model["latency_s"] + model["per_shard_s"] * shards + serialise
               + max(worker_net, server_net))
    step = work["step_s"] + round_s
    if work["step_s"] >= round_s:
        limit = "compute"
    else:
        limit = "servers' network" if server_net > worker_net else "workers' network"
    return workers * work["batch"] / step, limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" /
                        "distributed.json")
    parser.add_argument("--gbits", type=float, default=10.0, help="each node's link")
    parser.add_argument("--plot", type=Path, default=None, help="write the curves as PNG")
    args = parser.parse_args()
    data = json.loads(args.json.read_text())
    cores = int(data["machine"].split()[0])
    model = fit(data["rounds"], cores)
    print(f"round time fit over {len(data['rounds'])} points: latency "
          f"{model['latency_s'] * 1e3:.2f} ms + {model['per_shard_s'] * 1e3:.2f} ms per shard, "
          f"{model['side_s_per_byte'] * 1e9:.3f} ns of CPU per byte on each side (error: "
          f"median {model['median_rel_error']:.0%}, max {model['max_rel_error']:.0%})")
    works = {name: step_time(name) for name in ("resnet", "gpt")}
    curves: dict[str, dict[int, list[tuple[float, str]]]] = {}
    for name, work in works.items():
        print(f"\n{name}: {work['floats'] / 1e6:.1f}M parameters, step {work['step_s']:.2f} s "
              f"at batch {work['batch']} here; samples/s at {args.gbits:g} Gbit/s per node")
        print(f"{'workers':>8s} " + " ".join(f"{f'{k} shard' + 's' * (k > 1):>26s}"
                                               for k in SHARDS))
        curves[name] = {k: [predict(model, work, w, k, args.gbits) for w in WORKERS]
                        for k in SHARDS}
        for i, w in enumerate(WORKERS):
            print(f"{w:8d} " + " ".join(f"{curves[name][k][i][0]:8.1f} {curves[name][k][i][1]:>17s}"
                                        for k in SHARDS))
    data.update(fit=model, workloads=works, gbits=args.gbits)
    args.json.write_text(json.dumps(data, indent=1))
    if args.plot:
        _plot(curves, args.plot, args.gbits)


def _plot(curves: dict[str, Any], path: Path, gbits: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    marks = {"compute": "o", "workers' network": "s", "servers' network": "x"}
    fig, axes = plt.subplots(1, len(curves), figsize=(10, 4))
    for ax, (name, by_shards) in zip(axes, curves.items()):
        for k, points in by_shards.items():
            ax.plot(WORKERS, [p[0] for p in points], label=f"{k} shard{'s' * (k > 1)}")
            for w, (v, limit) in zip(WORKERS, points):
                ax.scatter([w], [v], marker=marks[limit], color="black", s=18, zorder=3)
        ax.set(xscale="log", yscale="log", xlabel="workers", ylabel="samples/s",
               title=f"{name} (BSP, {gbits:g} Gbit/s)")
        ax.set_xticks(WORKERS, [str(w) for w in WORKERS])
        ax.legend(fontsize=8)
    fig.text(0.5, 0.01, "markers: o compute-bound, s workers' network, x servers' network",
             ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main()
