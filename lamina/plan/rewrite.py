"""The plan compiler's rewrites: patterns of ops replaced by cheaper ones that compute the
same values and gradients. Each takes the nodes and the trace (whose value columns it may
extend) and returns the new nodes and a note per change, which `Plan.describe` shows."""

from __future__ import annotations

from collections.abc import Callable

from lamina.functions.activation import ReLU
from lamina.functions.conv import Conv, out_size
from lamina.functions.pooling import MaxPool
from lamina.plan.graph import wiring
from lamina.plan.kernels import ConvMaxPool, fusable
from lamina.plan.kernels.conv import ConvKernel
from lamina.plan.trace import Node, Trace

Rewrite = Callable[[list[Node], Trace], tuple[list[Node], list[str]]]


def pool_before_relu(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """max_pool(relu(x)) -> relu(max_pool(x)) where nothing else reads relu(x).

    Equal bit for bit, gradients included: max commutes with any nondecreasing function,
    and where a window's max is <= 0 both orders pass no gradient. The ReLU then runs on
    the pooled array, a kernel-area times smaller."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for pool in nodes:
        relu = maker.get(pool.inputs[0])
        if not (isinstance(pool.fn, MaxPool) and relu is not None
                and isinstance(relu.fn, ReLU) and readers[pool.inputs[0]] == 1
                and pool.inputs[0] not in trace.outputs):
            continue
        pooled = len(trace.kinds)  # a new value: the pooled pre-activation
        for column, value in ((trace.kinds, "op"), (trace.tensors, None),
                              (trace.shapes, trace.shapes[pool.outputs[0]]),
                              (trace.dtypes, trace.dtypes[pool.outputs[0]]),
                              (trace.arrays, None)):
            column.append(value)
        out[out.index(relu)] = Node(pool.fn, [relu.inputs[0]], [pooled], relu.index)
        out[out.index(pool)] = Node(relu.fn, [pooled], pool.outputs, pool.index)
        notes.append(f"{pool.name}#{pool.index}(ReLU#{relu.index}(x)) -> ReLU(MaxPool(x))")
    return out, notes


def fuse_conv_pool(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """max_pool(conv(x, W, b)) -> ConvMaxPool(x, W, b) where nothing else reads the
    convolution's output and the fusion pays (see kernels/conv_pool.py)."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for pool in nodes:
        conv = maker.get(pool.inputs[0])
        if not (conv is not None and len(conv.inputs) > 1 and readers[pool.inputs[0]] == 1
                and pool.inputs[0] not in trace.outputs
                and fusable(conv.fn, pool.fn, trace.shapes[conv.inputs[1]])):
            continue
        out[out.index(conv)] = Node(ConvMaxPool(conv.fn, pool.fn), conv.inputs,
                                    pool.outputs, conv.index)
        out.remove(pool)
        notes.append(f"{pool.name}({conv.name}#{conv.index}(x)) -> ConvMaxPool(x)")
    return out, notes


def crop_for_pool(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """A convolution read only by an unpadded max pooling that never reads its last rows
    or columns (an 11x11 output pooled 2x2 to 5x5) computes only what is read."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for pool in nodes:
        v = pool.inputs[0]
        conv = maker.get(v)
        if not (isinstance(pool.fn, MaxPool) and not any(pool.fn.p) and conv is not None
                and type(conv.fn) is Conv and readers[v] == 1 and v not in trace.outputs):
            continue
        shape = trace.shapes[v]
        size = (1, shape[2]) if pool.fn.nd == 1 else shape[2:]
        read = tuple((out_size(n, k, s, 0, 1) - 1) * s + k
                     for n, k, s in zip(size, pool.fn.k, pool.fn.s))
        if read == tuple(size):
            continue
        kernel = ConvKernel.lower(conv.fn)
        kernel.crop = read
        out[out.index(conv)] = Node(kernel, conv.inputs, conv.outputs, conv.index)
        trace.shapes[v] = (*shape[:2], *read[2 - pool.fn.nd:])
        notes.append(f"{conv.name}#{conv.index} computes {read[0]}x{read[1]} of "
                     f"its {size[0]}x{size[1]} outputs (the rest unpooled)")
    return out, notes


# In this order: a ReLU moved below the pooling leaves conv -> pool to fuse, or to crop.
REWRITES: list[Rewrite] = [pool_before_relu, fuse_conv_pool, crop_for_pool]


def rewrite(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """Every rewrite in turn; the nodes after, and the notes of every change."""
    notes: list[str] = []
    for step in REWRITES:
        nodes, more = step(nodes, trace)
        notes += more
    return nodes, notes
