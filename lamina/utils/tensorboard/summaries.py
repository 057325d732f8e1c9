"""TensorBoard summaries (protocol buffers of the `tensorboard` package) made from arrays:
scalars, histograms, images, text, hyper-parameters and a model's op graph."""

from __future__ import annotations

import io
import time
from collections.abc import Mapping
from typing import Any

import numpy as np


def _protos() -> Any:
    try:
        from tensorboard.compat.proto import summary_pb2
    except ImportError as e:
        raise ImportError("lamina.utils.tensorboard needs the tensorboard package: pip "
                          "install 'lamina[tensorboard]'") from e
    return summary_pb2


def as_array(value: Any) -> np.ndarray:
    return np.asarray(getattr(value, "array", value))


def scalar(tag: str, value: Any) -> Any:
    pb = _protos()
    number = as_array(value)
    if number.size != 1:
        raise ValueError(f"add_scalar: {tag!r} takes one number; got shape {tuple(number.shape)}")
    return pb.Summary(value=[pb.Summary.Value(tag=tag, simple_value=float(number.item()))])


def histogram(tag: str, values: Any, bins: Any = "tensorflow", max_bins: int | None = None
              ) -> Any:
    """Counts of `values` in buckets (NumPy's choice of edges for "tensorflow", PyTorch's
    default name for its own; any np.histogram `bins` otherwise)."""
    pb = _protos()
    array = as_array(values).astype(np.float64).reshape(-1)
    if array.size == 0:
        raise ValueError(f"add_histogram: {tag!r} got an empty array")
    counts, edges = np.histogram(array, bins="auto" if bins == "tensorflow" else bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, edges = np.histogram(array, bins=max_bins)
    proto = pb.HistogramProto(min=float(array.min()), max=float(array.max()),
                              num=float(array.size), sum=float(array.sum()),
                              sum_squares=float(array @ array),
                              bucket_limit=edges[1:].tolist(), bucket=counts.tolist())
    return pb.Summary(value=[pb.Summary.Value(tag=tag, histo=proto)])


def image(tag: str, img: Any, dataformats: str = "CHW") -> Any:
    """An image as PNG: floats in [0, 1] or uint8, laid out as `dataformats` says."""
    pb = _protos()
    array = as_array(img)
    layout = dataformats.upper()
    if array.ndim != len(layout) or set(layout) - set("CHW"):
        raise ValueError(f"add_image: {tag!r} has shape {tuple(array.shape)}, which does not fit "
                         f"dataformats {dataformats!r}")
    if "C" not in layout:
        array, layout = array[None], "C" + layout
    array = np.transpose(array, [layout.index(k) for k in "HWC"])
    if array.dtype != np.uint8:
        array = (np.clip(array, 0, 1) * 255 + 0.5).astype(np.uint8)
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    height, width, channels = array.shape
    return pb.Summary(value=[pb.Summary.Value(tag=tag, image=pb.Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=_png(array)))])


def _png(rgb: np.ndarray) -> bytes:
    from matplotlib.image import imsave  # a PNG encoder lamina's train extra brings

    buffer = io.BytesIO()
    imsave(buffer, rgb, format="png")
    return buffer.getvalue()


def text(tag: str, string: str) -> Any:
    from tensorboard.compat.proto import tensor_pb2, tensor_shape_pb2

    pb = _protos()
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="text"))
    tensor = tensor_pb2.TensorProto(
        dtype="DT_STRING", string_val=[string.encode()],
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]))
    return pb.Summary(value=[pb.Summary.Value(tag=f"{tag}/text_summary", metadata=meta,
                                              tensor=tensor)])


def hparams(hparam_dict: Mapping[str, Any], metric_dict: Mapping[str, Any]
            ) -> tuple[Any, Any, Any]:
    """The hparams plugin's experiment, session-start and session-end summaries."""
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

    pb = _protos()

    def summary(tag: str, **content: Any) -> Any:
        data = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION,
                                                 **content)
        meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()))
        return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=meta)])

    start = plugin_data_pb2.SessionStartInfo(start_time_secs=time.time())
    for key, value in hparam_dict.items():
        if isinstance(value, bool):
            start.hparams[key].bool_value = value
        elif isinstance(value, (int, float, np.number)):
            start.hparams[key].number_value = float(value)
        elif isinstance(value, str):
            start.hparams[key].string_value = value
        else:
            raise ValueError(f"add_hparams: {key!r} is a {type(value).__name__}; values must "
                             "be numbers, strings or booleans")
    experiment = api_pb2.Experiment(
        hparam_infos=[api_pb2.HParamInfo(name=k) for k in hparam_dict],
        metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            summary(metadata.SESSION_END_INFO_TAG, session_end_info=end))


def graph(model: Any, inputs: tuple[Any, ...]) -> Any:
    """The op graph of one call of `model` on `inputs`, read off the autograd graph: a
    node per op, per parameter (by its name) and per input."""
    from tensorboard.compat.proto import graph_pb2, node_def_pb2

    from lamina.autograd.grad_mode import enable_grad
    from lamina.autograd.tensor import Tensor

    tensors = [(x if isinstance(x, Tensor) else Tensor(np.asarray(x))).detach()
               for x in inputs]
    for x in tensors:  # recorded, so the graph reaches back to them
        x.requires_grad_(x.dtype.kind == "f")
    names = {id(p): name for name, p in model.named_parameters()}
    names.update({id(x): f"input_{i}" for i, x in enumerate(tensors)})
    with enable_grad():
        out = model(*tensors)
    nodes: dict[int, Any] = {}

    def name_of(t: Tensor) -> str:
        fn = t.creator
        if fn is None:
            return names.get(id(t), f"constant_{id(t)}")
        if id(fn) not in nodes:
            nodes[id(fn)] = None  # reserved: a graph may reach an op twice
            node = node_def_pb2.NodeDef(name=f"{type(fn).__name__}_{len(nodes)}",
                                        op=type(fn).__name__)
            node.input.extend(name_of(x) for x in getattr(fn, "inputs", ()))
            nodes[id(fn)] = node
        return nodes[id(fn)].name

    outputs = out if isinstance(out, (tuple, list)) else (out,)
    for t in outputs:
        if isinstance(t, Tensor):
            name_of(t)
    leaves = [node_def_pb2.NodeDef(name=n, op="Parameter" if not n.startswith("input_")
                                   else "Input") for n in names.values()]
    return graph_pb2.GraphDef(node=leaves + [n for n in nodes.values() if n is not None])
