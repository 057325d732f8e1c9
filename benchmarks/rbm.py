"""CD-1 training of a restricted Boltzmann machine, lamina against scikit-learn.

    python benchmarks/rbm.py [--threads 2] [--repeats 5]

The 8x8 digits, binarised at 0.5 (all 1,797), 100 hidden units, batch 20, 15 epochs,
learning rate 0.05 without momentum, in both: scikit-learn's `BernoulliRBM.fit`, and
lamina's `Trainer` with the `cd` algorithm (k=1), as a user writes it. scikit-learn's
chains are persistent (PCD), lamina's here start from the data (CD-1); the comparison
holds where both end at about the same reconstruction error, printed beside the times.
Each framework runs in its own process with its BLAS threads pinned; the time is the
median of `--repeats` whole trainings from fresh weights.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import run_isolated  # noqa: E402

HIDDEN, BATCH, EPOCHS, LR = 100, 20, 15, 0.05
TITLE = f"RBM CD-1, digits binarised, {HIDDEN} hidden, batch {BATCH}, {EPOCHS} epochs"


def digits() -> np.ndarray:
    from sklearn.datasets import load_digits

    return (load_digits().data / 16.0 > 0.5).astype(np.float32)


def reconstruction_error(x: np.ndarray, W: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Mean squared error of p(v | p(h | v)) against v: lamina's RBM.reconstruction_error,
    for weights W (hidden, visible), visible bias b and hidden bias c."""
    def sigmoid(z: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-z))

    return float(np.mean((x - sigmoid(sigmoid(x @ W.T + c) @ W + b)) ** 2))


def train_sklearn(x: np.ndarray, seed: int) -> tuple[float, float]:
    from sklearn.neural_network import BernoulliRBM

    rbm = BernoulliRBM(n_components=HIDDEN, batch_size=BATCH, n_iter=EPOCHS,
                       learning_rate=LR, random_state=seed)
    start = time.perf_counter()
    rbm.fit(x)
    seconds = time.perf_counter() - start
    return seconds, reconstruction_error(x, rbm.components_, rbm.intercept_visible_,
                                         rbm.intercept_hidden_)


def train_lamina(x: np.ndarray, seed: int) -> tuple[float, float]:
    import lamina as lm
    from lamina import nn, optim
    from lamina.data import ArrayDataset, DataLoader
    from lamina.train import Trainer

    lm.manual_seed(seed)
    rbm = nn.RBM(x.shape[1], HIDDEN)
    trainer = Trainer(rbm, optim.SGD(rbm.parameters(), lr=LR), algorithm="cd", metrics=[])
    loader = DataLoader(ArrayDataset(x), BATCH, shuffle=True)
    start = time.perf_counter()
    trainer.fit(loader, EPOCHS)
    seconds = time.perf_counter() - start
    return seconds, rbm.reconstruction_error(x)


def one(framework: str, repeats: int) -> dict[str, Any]:
    x = digits()
    train = train_lamina if framework == "lamina" else train_sklearn
    runs = [train(x, seed) for seed in range(repeats)]
    return {"framework": framework, "seconds": statistics.median(s for s, _ in runs),
            "recon_error": statistics.median(e for _, e in runs)}


def compare(threads: int, repeats: int) -> list[dict[str, Any]]:
    """lamina's row, then scikit-learn's, each from its own process."""
    script = os.path.abspath(__file__)
    return [run_isolated(script, ["--only", fw, "--repeats", str(repeats)], threads)
            for fw in ("lamina", "sklearn")]


def print_rows(rows: list[dict[str, Any]]) -> None:
    print(f"{'framework':10s} {'seconds':>8s} {'samples/s':>10s} {'recon err':>9s} "
          f"{'vs sklearn':>10s}")
    base = rows[-1]["seconds"]
    for r in rows:
        rate = 1797 * EPOCHS / r["seconds"]
        print(f"{r['framework']:10s} {r['seconds']:8.3f} {rate:10.0f} {r['recon_error']:9.4f} "
              f"{r['seconds'] / base:10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.only:
        print(json.dumps(one(args.only, args.repeats)))
        return
    rows = compare(args.threads, args.repeats)
    print(f"{TITLE}, threads={args.threads}, median of {args.repeats} trainings")
    print_rows(rows)


if __name__ == "__main__":
    main()
