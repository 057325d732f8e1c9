"""The callbacks that report training: a progress bar (or a line an epoch), the metrics
as CSV, and the curves as a PNG; each file written atomically, so a crash leaves the last
complete one."""

from __future__ import annotations

import csv
import io
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.io.checkpoint import atomic_write
from lamina.train.callbacks import Callback

if TYPE_CHECKING:
    from lamina.train.trainer import Trainer


class ProgressBar(Callback):
    """A tqdm bar per epoch with loss and samples/s on a terminal; one line per epoch else.
    The line's time is the whole epoch's; its samples/s is training's alone (validation
    left out)."""

    def __init__(self, stream: Any = None, bar: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.bar_enabled = bar if bar is not None else self.stream.isatty()
        self.bar: Any = None

    def on_epoch_start(self, trainer: Trainer) -> None:
        self.start, self.samples, self.trained = time.perf_counter(), 0, 0.0
        if self.bar_enabled:
            from tqdm import tqdm

            total = len(trainer.train_loader) if hasattr(trainer.train_loader, "__len__") else None
            self.bar = tqdm(total=total, desc=f"epoch {trainer.epoch + 1}/{trainer.epochs}",
                            initial=trainer.batch_in_epoch,  # resumed inside the epoch
                            file=self.stream, leave=False, dynamic_ncols=True)

    def on_batch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        self.samples += trainer.last_batch_size
        self.trained = time.perf_counter() - self.start  # samples/s leaves out validation
        if self.bar is not None:
            rate = self.samples / max(self.trained, 1e-9)
            self.bar.set_postfix(loss=f"{logs.get('loss', float('nan')):.4f}",
                                 samples_s=f"{rate:.0f}", refresh=False)
            self.bar.update(1)

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elapsed = time.perf_counter() - self.start
        parts = " ".join(f"{k} {v:.4f}" for k, v in logs.items() if k != "epoch")
        print(f"epoch {trainer.epoch}/{trainer.epochs} {parts} ({elapsed:.1f}s, "
              f"{self.samples / max(self.trained, 1e-9):.0f} samples/s)", file=self.stream,
              flush=True)


class CSVLogger(Callback):
    """Writes one row per epoch to a CSV file, rewritten from the history on resume."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def _write(self, history: list[dict[str, float]]) -> None:
        keys: list[str] = []
        for row in history:
            keys += [k for k in row if k not in keys]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=keys)
        writer.writeheader()
        writer.writerows(history)
        atomic_write(self.path, buf.getvalue().encode())

    def on_fit_start(self, trainer: Trainer) -> None:
        if trainer.history:
            self._write(trainer.history)

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        self._write(trainer.history)


class PlotCurves(Callback):
    """Draws loss (and accuracy, where measured) per epoch to a PNG, headless."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        # A bare Figure draws with Agg on its own: no pyplot, so the user's backend (a
        # notebook's inline plots) is left as it was, and nothing global is touched.
        from matplotlib.figure import Figure

        history = trainer.history
        groups = [k for k in history[-1] if k != "epoch" and not k.startswith("val_")]
        fig = Figure(figsize=(4.5 * len(groups), 3.5))
        axes = fig.subplots(1, len(groups), squeeze=False)
        epochs = [row["epoch"] for row in history]
        for ax, key in zip(axes[0], groups):
            has_val = f"val_{key}" in history[-1]
            for name, label in ((key, "train"), (f"val_{key}", "validation")):
                values = [row.get(name, math.nan) for row in history]
                if not all(math.isnan(v) for v in values):
                    ax.plot(epochs, values, marker="o", markersize=3, label=label)
            ax.set_xlabel("epoch")
            ax.set_title(key)
            ax.grid(alpha=0.3)
            if has_val:
                ax.legend()
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        atomic_write(self.path, buf.getvalue())
