"""The Trainer: resume equals an uninterrupted run, crashes keep a checkpoint, guards stop."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
import lamina.optim as optim
from lamina.data import ArrayDataset, DataLoader
from lamina.optim import lr_scheduler
from lamina.train import (
    Callback,
    Checkpoint,
    CSVLogger,
    EarlyStopping,
    GradientClipping,
    LRSchedule,
    NaNGuard,
    NonFiniteError,
    PlotCurves,
    Trainer,
    Trigger,
)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    return DataLoader(ArrayDataset(x, y), 16, shuffle=True, seed=3), DataLoader(ArrayDataset(x, y), 48)


class _Poison(Callback):
    """Writes `value` into one weight at the end of epoch 2."""

    def __init__(self, value: float) -> None:
        self.value = value

    def on_epoch_end(self, trainer, logs):
        if trainer.epoch == 2:
            trainer.model[0].weight.array[0, 0] = self.value


def _trainer(directory, trigger=None):
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
    opt = optim.Adam(model.parameters(), lr=0.01)
    sched = lr_scheduler.StepLR(opt, 2, 0.5)
    callbacks = [NaNGuard(), LRSchedule(sched), EarlyStopping("val_loss", patience=50),
                 Checkpoint(directory, trigger or Trigger(1, "epoch"), "val_loss")]
    return Trainer(model, opt, callbacks=callbacks)


def _weights(trainer):
    return {n: p.array.copy() for n, p in trainer.model.named_parameters()}


def test_resume_after_epoch_2_equals_an_uninterrupted_run_bit_for_bit(tmp_path) -> None:
    train, val = _data()
    straight = _trainer(tmp_path / "a")
    straight.fit(train, 5, val)

    first = _trainer(tmp_path / "b")
    first.fit(train, 2, val)
    lm.manual_seed(999)  # anything that happens in between must not matter
    resumed = _trainer(tmp_path / "c")
    resumed.resume(tmp_path / "b" / "last.safetensors")
    assert resumed.epoch == 2 and resumed.iteration == 12
    resumed.fit(train, 5, val)
    for name, w in _weights(straight).items():
        np.testing.assert_array_equal(w, _weights(resumed)[name], err_msg=name)
    assert resumed.history == straight.history
    assert resumed.optimizer.param_groups[0]["lr"] == straight.optimizer.param_groups[0]["lr"]


def test_resume_from_a_mid_epoch_checkpoint_continues_that_epoch(tmp_path) -> None:
    train, val = _data()
    straight = _trainer(tmp_path / "a")
    straight.fit(train, 3, val)

    class StopAt(Callback):
        def on_batch_end(self, trainer, logs):
            if trainer.iteration == 9:  # the middle of epoch 2 (6 batches an epoch)
                raise KeyboardInterrupt

    crashed = _trainer(tmp_path / "b", Trigger(1, "iteration"))
    crashed.callbacks.append(StopAt())
    with pytest.raises(KeyboardInterrupt):
        crashed.fit(train, 3, val)
    resumed = _trainer(tmp_path / "c")
    resumed.resume(tmp_path / "b" / "last.safetensors")
    assert (resumed.epoch, resumed.batch_in_epoch) == (1, 3)
    resumed.fit(train, 3, val)
    for name, w in _weights(straight).items():
        np.testing.assert_array_equal(w, _weights(resumed)[name], err_msg=name)
    assert resumed.history == straight.history


def test_stopping_now_checkpoints_the_place_in_the_epoch_and_resumes_exactly(tmp_path) -> None:
    train, val = _data()
    straight = _trainer(tmp_path / "a")
    straight.fit(train, 3, val)

    class CtrlC(Callback):  # what the first Ctrl-C under `lamina train` does
        def on_batch_end(self, trainer, logs):
            if trainer.iteration == 9:  # the middle of epoch 2 (6 batches an epoch)
                trainer.stop("interrupted", now=True)

    stopped = _trainer(tmp_path / "b")  # checkpoints once an epoch: none at batch 9 itself
    stopped.callbacks.append(CtrlC())
    stopped.fit(train, 3, val)
    assert (stopped.epoch, stopped.batch_in_epoch, len(stopped.history)) == (1, 3, 1)
    resumed = _trainer(tmp_path / "c")
    resumed.resume(tmp_path / "b" / "last.safetensors")  # written at the stop
    assert (resumed.epoch, resumed.batch_in_epoch) == (1, 3)
    resumed.fit(train, 3, val)
    for name, w in _weights(straight).items():
        np.testing.assert_array_equal(w, _weights(resumed)[name], err_msg=name)
    assert resumed.history == straight.history


def test_a_killed_process_leaves_a_loadable_last_checkpoint(tmp_path) -> None:
    script = textwrap.dedent(f"""
        import os, signal, numpy as np
        import lamina as lm, lamina.nn as nn, lamina.optim as optim
        from lamina.data import ArrayDataset, DataLoader
        from lamina.train import Trainer, Checkpoint, Trigger, Callback

        class Kill(Callback):
            def on_batch_end(self, trainer, logs):
                if trainer.iteration == 23:   # mid-epoch: 10 batches an epoch
                    os.kill(os.getpid(), signal.SIGKILL)

        x = np.random.default_rng(0).standard_normal((160, 4)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int64)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        opt = optim.SGD(model.parameters(), lr=0.1)
        ckpt = Checkpoint({str(tmp_path)!r}, Trigger(1, "iteration"))
        Trainer(model, opt, callbacks=[ckpt, Kill()]).fit(DataLoader(ArrayDataset(x, y), 16), 5)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    info = lm.io.load(tmp_path / "last.safetensors", model, optim.SGD(model.parameters(), lr=0.1))
    assert info["extra"]["iteration"] in (22, 23) and info["extra"]["epoch"] == 2
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_nan_loss_stops_the_run_and_keeps_the_last_good_checkpoint(tmp_path) -> None:
    train, val = _data()
    trainer = _trainer(tmp_path)
    trainer.callbacks.append(_Poison(np.nan))  # after the checkpoint of epoch 2 was written
    with pytest.raises(NonFiniteError, match=r"at epoch 3, iteration 13; training stopped "
                                             r"before the update, the last good checkpoint is"):
        trainer.fit(train, 5, val)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
    info = lm.io.load(tmp_path / "last.safetensors", model)
    assert info["extra"]["epoch"] == 2
    assert all(np.isfinite(p.array).all() for p in model.parameters())


def test_a_checkpoint_is_never_written_with_non_finite_weights(tmp_path) -> None:
    train, val = _data()
    trainer = _trainer(tmp_path)
    trainer.callbacks.insert(0, _Poison(np.inf))  # before the checkpoint of epoch 2
    with pytest.raises(NonFiniteError, match=r"0.weight is not finite; kept .*last.safetensors"):
        trainer.fit(train, 5, val)
    info = lm.io.load(tmp_path / "last.safetensors")
    assert info["extra"]["epoch"] == 1


def test_a_nan_gradient_is_caught_before_the_weights_change() -> None:
    model = nn.Linear(2, 2)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1), loss="mse_loss",
                      metrics=[], callbacks=[NaNGuard()])
    before = model.weight.array.copy()
    x = np.array([[np.inf, 1.0]], np.float32)
    loader = DataLoader(ArrayDataset(x, np.zeros((1, 2), np.float32)), 1)
    with pytest.raises(NonFiniteError, match=r"not finite at .* The batch itself holds a NaN or "
                                             r"infinity \(part 0 of the batch, shape \(1, 2\)\): "
                                             r"the data needs cleaning, not the learning rate\.$"):
        trainer.fit(loader, 1)
    np.testing.assert_array_equal(model.weight.array, before)


def test_a_nan_from_finite_data_blames_the_learning_rate(tmp_path) -> None:
    train, val = _data()
    trainer = _trainer(tmp_path)
    trainer.callbacks.append(_Poison(np.nan))
    with pytest.raises(NonFiniteError, match=r"Lower the learning rate or clip gradients "
                                             r"\(trainer\.clip_grad_norm\)\.$"):
        trainer.fit(train, 5, val)


def test_early_stopping_ends_the_run() -> None:
    train, val = _data()
    model = nn.Linear(6, 2)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.0),
                      callbacks=[EarlyStopping("val_loss", patience=2)])
    history = trainer.fit(train, 20, val)
    assert len(history) == 3 and "early stopping" in trainer.stop_reason


def test_gradient_clipping_bounds_the_update() -> None:
    model = nn.Linear(1, 1, bias=False)
    model.weight.array[...] = 0
    x = np.array([[100.0]], np.float32)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=1.0), loss="mse_loss", metrics=[],
                      callbacks=[GradientClipping(max_norm=0.5)])
    trainer.fit(DataLoader(ArrayDataset(x, np.ones((1, 1), np.float32)), 1), 1)
    assert abs(model.weight.array[0, 0]) == pytest.approx(0.5, rel=1e-5)


def test_metrics_csv_and_curves_png_are_written(tmp_path) -> None:
    train, val = _data()
    model = nn.Linear(6, 2)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1),
                      callbacks=[CSVLogger(tmp_path / "metrics.csv"),
                                 PlotCurves(tmp_path / "curves.png")])
    matplotlib = pytest.importorskip("matplotlib")
    backend = matplotlib.get_backend()
    matplotlib.use("svg")  # a user's own backend (a notebook's inline one) must stay
    try:
        trainer.fit(train, 3, val)
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(backend)
    with open(tmp_path / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["1", "2", "3"]
    assert set(rows[0]) == {"epoch", "loss", "accuracy", "val_loss", "val_accuracy"}
    assert float(rows[-1]["val_loss"]) < float(rows[0]["val_loss"])
    png = (tmp_path / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    size = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert size == (900, 350)  # loss and accuracy side by side, 4.5 x 3.5 in at 100 dpi


@pytest.mark.parametrize("callback, who", [
    (lambda d, opt: Checkpoint(d, monitor="val_los"), r"Checkpoint \(keep_best\)"),
    (lambda d, opt: LRSchedule(lr_scheduler.ReduceLROnPlateau(opt), monitor="val_los"),
     "ReduceLROnPlateau"),
    (lambda d, opt: EarlyStopping("val_los"), "EarlyStopping"),
])
def test_a_watched_metric_that_is_not_there_is_an_error_not_a_silent_no_op(
        tmp_path, callback, who) -> None:
    train, val = _data()
    model = nn.Linear(6, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, opt, callbacks=[callback(tmp_path, opt),
                                             Checkpoint(tmp_path / "kept")])
    with pytest.raises(KeyError, match=rf"{who}: no metric 'val_los' this epoch"):
        trainer.fit(train, 2, val)
    # The Checkpoint listed after the failing callback still saved the epoch.
    assert (tmp_path / "kept" / "last.safetensors").exists()
    with pytest.raises(KeyError, match=r"val_\* metrics need fit\(\.\.\., val_loader\)"):
        Trainer(model, opt, callbacks=[Checkpoint(tmp_path, monitor="val_loss")]).fit(train, 1)
    assert (tmp_path / "last.safetensors").exists()  # the epoch was saved before the error


def test_fit_counts_epochs_from_the_start_and_says_so_when_there_is_nothing_left() -> None:
    train, val = _data()
    model = nn.Linear(6, 2)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1))
    trainer.fit(train, 2)
    with pytest.warns(RuntimeWarning, match=r"2 epochs are already done, so epochs=2 trains "
                      r"no more; pass epochs=4 for 2 more"):
        trainer.fit(train, 2)
    assert len(trainer.history) == 2
    trainer.fit(train, 4)
    assert [h["epoch"] for h in trainer.history] == [1, 2, 3, 4]


def test_progress_prints_one_line_an_epoch_and_a_bar_that_starts_where_a_resume_does(
        tmp_path) -> None:
    import io

    from lamina.train import ProgressBar

    train, val = _data()  # 96 samples in batches of 16: 6 batches an epoch
    lines = io.StringIO()
    model = nn.Linear(6, 2)
    Trainer(model, optim.SGD(model.parameters(), lr=0.1),
            callbacks=[ProgressBar(lines)]).fit(train, 2, val)
    out = lines.getvalue().splitlines()
    assert [line.split(" loss ")[0] for line in out] == ["epoch 1/2", "epoch 2/2"]
    assert all("val_loss" in line and line.endswith("samples/s)") for line in out)

    class StopAt(Callback):
        def on_batch_end(self, trainer, logs):
            if trainer.iteration == 9:  # the middle of epoch 2
                raise KeyboardInterrupt

    crashed = _trainer(tmp_path / "b", Trigger(1, "iteration"))
    crashed.callbacks.append(StopAt())
    with pytest.raises(KeyboardInterrupt):
        crashed.fit(train, 2, val)
    bar = io.StringIO()
    resumed = _trainer(tmp_path / "c")
    resumed.callbacks.append(ProgressBar(bar, bar=True))
    resumed.resume(tmp_path / "b" / "last.safetensors")
    resumed.fit(train, 2, val)
    renders = bar.getvalue()
    assert " 3/6 " in renders and " 0/6 " not in renders  # batches 4-6 of epoch 2 remain
