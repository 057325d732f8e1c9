"""SummaryWriter's event files, read back with TensorBoard's own reader and served by a
real TensorBoard on loopback; the Trainer's and `lamina train`'s logs beside metrics.csv."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina.utils.tensorboard import SummaryWriter

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)


def _read(path) -> EventAccumulator:
    events = EventAccumulator(str(path), size_guidance={"tensors": 0})
    events.Reload()
    return events


def test_every_kind_of_summary_reads_back(tmp_path) -> None:
    values = np.random.default_rng(0).standard_normal(500)
    with SummaryWriter(tmp_path) as writer:
        for step in range(4):
            writer.add_scalar("Loss/train", 1.0 / (step + 1), step)
        writer.add_histogram("weights", lm.tensor(values), 3)
        writer.add_image("digit", np.linspace(0, 1, 3 * 8 * 6).reshape(3, 8, 6), 2)
        writer.add_image("gray", np.zeros((5, 7), np.uint8), 2, dataformats="HW")
        writer.add_text("notes", "lamina **was** here", 1)
        writer.add_graph(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)),
                         lm.zeros(2, 3))
    events = _read(tmp_path)
    assert [(e.step, e.value) for e in events.Scalars("Loss/train")] == [
        (0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3)), (3, 0.25)]
    histo = events.Histograms("weights")[0].histogram_value
    assert histo.num == 500 and histo.min == pytest.approx(values.min())
    assert sum(histo.bucket) == 500
    image = events.Images("digit")[0]
    assert (image.width, image.height) == (6, 8)
    assert events.Images("gray")[0].width == 7
    text = events.Tensors("notes/text_summary")[0].tensor_proto.string_val[0]
    assert text == b"lamina **was** here"
    graph = events.Graph()
    ops = [node.op for node in graph.node]
    assert ops.count("Parameter") == 4 and "ReLU" in ops and ops.count("Linear") == 2
    assert any("input_0" in node.input for node in graph.node if node.op == "Linear")
    names = {node.name for node in graph.node}
    assert all(name in names for node in graph.node for name in node.input)


def test_scalars_and_hparams_go_to_sub_runs_as_pytorch_writes_them(tmp_path) -> None:
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalars("loss", {"train": 1.0, "val": 2.0}, 0)
        writer.add_hparams({"lr": 0.1, "optimizer": "sgd", "nesterov": True},
                           {"hparam/accuracy": 0.9}, run_name="trial")
    assert _read(tmp_path / "loss_val").Scalars("loss")[0].value == 2.0
    trial = _read(tmp_path / "trial")
    assert trial.Scalars("hparam/accuracy")[0].value == pytest.approx(0.9)
    assert "_hparams_/session_start_info" in trial.summary_metadata
    with pytest.raises(ValueError, match="'opt' is a list"):
        SummaryWriter(tmp_path / "x").add_hparams({"opt": [1]}, {})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_real_tensorboard_serves_the_scalars(tmp_path) -> None:
    with SummaryWriter(tmp_path / "run1") as writer:
        for step in range(3):
            writer.add_scalar("loss", 0.5 ** step, step)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir",
                               str(tmp_path), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=run1&tag=loss"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                points = json.loads(urllib.request.urlopen(url, timeout=2).read())
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert [(step, value) for _, step, value in points] == [(0, 1.0), (1, 0.5), (2, 0.25)]


def test_a_job_writes_tensorboard_logs_beside_metrics_csv(tmp_path) -> None:
    from lamina.jobs import train
    from lamina.train.jobfile import validate

    config = validate({
        "name": "tb", "data": {"name": "digits", "batch_size": 64},
        "model": {"type": "Sequential", "layers": [
            {"type": "Linear", "in_features": 64, "out_features": 10}]},
        "optimizer": {"type": "Adam", "lr": 0.05},
        "trainer": {"epochs": 3, "out_dir": str(tmp_path), "progress": False}})
    run, _ = train(config)
    events = _read(run.directory / "tensorboard")
    losses = [e.value for e in events.Scalars("loss")]
    csv_rows = (run.directory / "metrics.csv").read_text().splitlines()[1:]
    assert len(losses) == len(csv_rows) == 3
    assert [e.step for e in events.Scalars("val_loss")] == [1, 2, 3]  # epochs, as the CSV
    assert events.Scalars("lr")[0].value == pytest.approx(0.05)


def test_a_resumed_job_continues_the_curves_without_doubled_points(tmp_path) -> None:
    from lamina.jobs import train
    from lamina.train.jobfile import validate

    def job(epochs):
        return validate({
            "name": "tb", "data": {"name": "digits", "batch_size": 64},
            "model": {"type": "Linear", "in_features": 64, "out_features": 10},
            "optimizer": {"type": "SGD", "lr": 0.1},
            "trainer": {"epochs": epochs, "out_dir": str(tmp_path), "progress": False}})

    first, _ = train(job(2))
    resumed, _ = train(job(4), resume=True)
    assert resumed.directory == first.directory
    steps = [e.step for e in _read(resumed.directory / "tensorboard").Scalars("loss")]
    # every epoch once; the two runs' files may be read in either order (both are named by
    # the second they were opened in)
    assert sorted(steps) == [1, 2, 3, 4]
