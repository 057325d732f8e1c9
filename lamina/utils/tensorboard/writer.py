"""SummaryWriter with PyTorch's constructor and methods, over TensorBoard's own event file
writer."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lamina.utils.tensorboard import summaries


class SummaryWriter:
    """Writes scalars, histograms, images, text, hyper-parameters and graphs to an event
    file in `log_dir` (default `runs/<date>_<host><comment>`), for TensorBoard.

    Examples:
        >>> writer = SummaryWriter(tmp_dir)
        >>> for step in range(3):
        ...     writer.add_scalar("Loss/train", 1.0 / (step + 1), step)
        >>> writer.close()
    """

    def __init__(self, log_dir: str | os.PathLike | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        try:
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
        except ImportError as e:
            raise ImportError("SummaryWriter needs the tensorboard package: pip install "
                              "'lamina[tensorboard]'") from e
        if log_dir is None:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._make = lambda path: EventFileWriter(path, max_queue, flush_secs, filename_suffix)
        self._writer = self._make(self.log_dir)
        self._children: dict[str, Any] = {}
        if purge_step is not None:  # as PyTorch: steps from purge_step on are dropped
            from tensorboard.compat.proto import event_pb2

            self._writer.add_event(event_pb2.Event(
                step=purge_step, file_version="brain.Event:2",
                session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START)))

    def get_logdir(self) -> str:
        """The directory the event files go to."""
        return self.log_dir

    def _write(self, summary: Any, step: int | None, walltime: float | None,
               writer: Any = None) -> None:
        from tensorboard.compat.proto import event_pb2

        event = event_pb2.Event(summary=summary, wall_time=walltime or time.time())
        if step is not None:
            event.step = int(step)
        (writer or self._writer).add_event(event)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One number at a step."""
        self._write(summaries.scalar(tag, scalar_value), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Mapping[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Several numbers on one chart: each in its own run `log_dir/main_tag_tag`, as
        PyTorch writes them."""
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            if path not in self._children:
                self._children[path] = self._make(path)
            self._write(summaries.scalar(main_tag, value), global_step, walltime,
                        self._children[path])

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """The distribution of a tensor's values (weights, gradients, activations)."""
        self._write(summaries.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """An image: floats in [0, 1] or uint8, (C, H, W) unless `dataformats` says."""
        self._write(summaries.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """A string (Markdown, as TensorBoard renders it)."""
        self._write(summaries.text(tag, text_string), global_step, walltime)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The op graph of one call `model(input_to_model)` (a tensor or a tuple)."""
        if input_to_model is None:
            raise ValueError("add_graph: give input_to_model, an example input to run the "
                             "model on")
        inputs = input_to_model if isinstance(input_to_model, (tuple, list)) else (
            input_to_model,)
        from tensorboard.compat.proto import event_pb2

        graph = summaries.graph(model, tuple(inputs))
        self._writer.add_event(event_pb2.Event(graph_def=graph.SerializeToString(),
                                               wall_time=time.time()))

    def add_hparams(self, hparam_dict: Mapping[str, Any], metric_dict: Mapping[str, Any],
                    hparam_domain_discrete: Any = None, run_name: str | None = None,
                    global_step: int | None = None) -> None:
        """A run's hyper-parameters and final metrics, for the HParams dashboard; written
        to the sub-run `run_name` (default: the time), as PyTorch writes them."""
        if not isinstance(hparam_dict, Mapping) or not isinstance(metric_dict, Mapping):
            raise TypeError("add_hparams: hparam_dict and metric_dict should be dictionary.")
        path = os.path.join(self.log_dir, run_name or str(time.time()))
        child = self._children.setdefault(path, self._make(path))
        for summary in summaries.hparams(hparam_dict, metric_dict):
            self._write(summary, None, None, child)
        for tag, value in metric_dict.items():
            self._write(summaries.scalar(tag, value), global_step, None, child)

    def flush(self) -> None:
        """Write what is queued to disk."""
        for writer in (self._writer, *self._children.values()):
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file."""
        for writer in (self._writer, *self._children.values()):
            writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
