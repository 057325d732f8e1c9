"""The plan compiler's rewrites: patterns of ops replaced by cheaper ones that compute the
same values and gradients. Each takes the nodes and the trace (whose value columns it may
extend) and returns the new nodes and a note per change, which `Plan.describe` shows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lamina.functions.activation import ReLU
from lamina.functions.array import Transpose
from lamina.functions.connection import Embedding, Linear
from lamina.functions.conv import Conv
from lamina.functions.conv_windows import out_size
from lamina.functions.pooling import MaxPool
from lamina.functions.recurrent import LSTMSequence
from lamina.functions.recurrent_lookup import LSTMLookupSequence
from lamina.plan.graph import only_reader, transpose_axes, wiring
from lamina.plan.kernels import ConvMaxPool, fusable
from lamina.plan.kernels.conv import ConvKernel
from lamina.plan.kernels.conv_norm import ConvBatchNorm, foldable
from lamina.plan.rewrite_attention import causal_blocks, split_heads
from lamina.plan.rewrite_bias import bias_into_reader
from lamina.plan.trace import Node, Trace

Rewrite = Callable[[list[Node], Trace], tuple[list[Node], list[str]]]


def _new_value(trace: Trace, shape: tuple[int, ...], dtype: object) -> int:
    """A new op output in the trace's value columns; its number."""
    for column, value in ((trace.kinds, "op"), (trace.tensors, None), (trace.shapes, shape),
                          (trace.dtypes, dtype), (trace.arrays, None)):
        column.append(value)
    return len(trace.kinds) - 1


def _rows_kept(turn: Node, trace: Trace) -> tuple[int, ...] | None:
    """A transpose's axes, non-negative, where it keeps the last axis last (it moves whole
    rows); None where it moves that axis or gives no axes."""
    ndim, axes = len(trace.shapes[turn.inputs[0]]), transpose_axes(turn, trace)
    return axes if axes is not None and len(axes) == ndim and axes[-1] == ndim - 1 else None


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
                and isinstance(relu.fn, ReLU) and only_reader(pool.inputs[0], readers, trace)):
            continue
        # a new value: the pooled pre-activation
        pooled = _new_value(trace, trace.shapes[pool.outputs[0]], trace.dtypes[pool.outputs[0]])
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
        if not (conv is not None and len(conv.inputs) > 1
                and only_reader(pool.inputs[0], readers, trace)
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
                and type(conv.fn) is Conv and only_reader(v, readers, trace)):
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


def fold_batch_norm(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """relu(batch_norm(conv(x, W, b), gamma, beta)) -> ConvBatchNorm(x, W, b, gamma, beta)
    where the norm runs on its running statistics, no gradient flows through the two
    (kernels/conv_norm.py), and nothing else reads the convolution's output; the ReLU
    joins where it alone reads the norm's."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for norm in nodes:
        conv = maker.get(norm.inputs[0])
        if not (conv is not None and foldable(conv.fn, norm.fn)
                and only_reader(norm.inputs[0], readers, trace)):
            continue
        y = norm.outputs[0]
        relu = next((n for n in nodes if y in n.inputs), None)
        if not (relu is not None and type(relu.fn) is ReLU and only_reader(y, readers, trace)):
            relu = None
        fused = ConvBatchNorm(conv.fn, norm.fn, len(conv.inputs), relu is not None)
        last = relu or norm
        out[out.index(conv)] = Node(fused, [*conv.inputs, *norm.inputs[1:]], last.outputs,
                                    conv.index)
        out.remove(norm)
        if relu is not None:
            out.remove(relu)
        notes.append(f"{'ReLU(' if relu else ''}{norm.name}#{norm.index}({conv.name}#"
                     f"{conv.index}(x)){')' if relu else ''} -> ConvBatchNorm(x)")
    return out, notes


def linear_of_embedding(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """linear(embedding(ids, E), W, b) -> embedding(ids, linear(E, W, b)) where there are
    more ids than rows of E, and likewise through a transpose of the ids' axes.

    The rows of E @ W.T + b are the products of every row the ids can pick, so picking
    them afterwards gives the same values (to float rounding) and, by the chain rule, the
    same gradients: E's and W's come from the table's, which is a sum over the ids of
    the output's rows. With a small vocabulary (a character-level language model's 64
    rows against 1600 ids) the GEMMs of the input projection, forward and backward, run
    on 64 rows instead of 1600, and the lookup copies rows of the output width."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for lin in nodes:
        if type(lin.fn) is not Linear:
            continue
        between = maker.get(lin.inputs[0])
        if between is not None and type(between.fn) is Transpose and \
                only_reader(between.outputs[0], readers, trace):
            axes = _rows_kept(between, trace)
            if axes is None:
                continue  # the rows' own axis moves
            look = maker.get(between.inputs[0])
        else:
            look, between = between, None
        if look is None or type(look.fn) is not Embedding or look.fn.padding_idx is not None \
                or look.fn.scale_grad_by_freq \
                or not only_reader(look.outputs[0], readers, trace):
            continue
        ids, table = look.inputs
        rows, count = trace.shapes[table][0], int(np.prod(trace.shapes[ids]))
        if count <= rows:
            continue  # the table would be the larger product
        y = lin.outputs[0]
        products = _new_value(trace, (rows, trace.shapes[y][-1]), trace.dtypes[y])
        out[out.index(look)] = Node(Linear(), [table, *lin.inputs[1:]], [products], look.index)
        if between is not None:  # the ids' axes, moved as the rows' were
            moved = _new_value(trace, tuple(trace.shapes[ids][a] for a in axes[:-1]),
                               trace.dtypes[ids])
            out[out.index(between)] = Node(Transpose(axes[:-1]), [ids], [moved], between.index)
            ids = moved
        out[out.index(lin)] = Node(Embedding(), [ids, products], [y], lin.index)
        notes.append(f"{lin.name}#{lin.index}({'Transpose(' if between else ''}"
                     f"{look.name}#{look.index}(ids, E){')' if between else ''}, W) -> "
                     f"Embedding(ids, Linear(E, W)): {rows} rows for {count} ids")
    return out, notes


def linear_before_transpose(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """linear(transpose(x), W, b) -> transpose(linear(x, W, b)) where the transpose keeps
    the features last and the linear makes no more features than it reads.

    The same products, row for row. A transposed view is not contiguous, so the GEMM's
    flat rows are a copy of it, and so is the gradient the transpose hands back; moved
    after the linear, the transpose turns the smaller array instead. A time-major
    recurrent layer's output read batch-first by its per-step head is the case in point."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for lin in nodes:
        turn = maker.get(lin.inputs[0])
        if type(lin.fn) is not Linear or turn is None or type(turn.fn) is not Transpose \
                or not only_reader(lin.inputs[0], readers, trace):
            continue
        x, y = turn.inputs[0], lin.outputs[0]
        if x in maker and type(maker[x].fn) is Transpose:
            continue  # x is itself a view: the transposes may cancel into rows in order
        axes = _rows_kept(turn, trace)
        if axes is None or trace.shapes[y][-1] > trace.shapes[x][-1]:
            continue
        rows = _new_value(trace, (*trace.shapes[x][:-1], trace.shapes[y][-1]),
                          trace.dtypes[y])
        out[out.index(turn)] = Node(Linear(), [x, *lin.inputs[1:]], [rows], turn.index)
        out[out.index(lin)] = Node(Transpose(axes), [rows], [y], lin.index)
        notes.append(f"{lin.name}#{lin.index}(Transpose#{turn.index}(x)) -> "
                     "Transpose(Linear(x))")
    return out, notes


def lookup_into_lstm(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """lstm_sequence(embedding(ids, G), ...) -> LSTMLookupSequence(ids, G, ...) where
    nothing else reads the looked-up x-gates: the recurrence looks each step's up itself
    (see functions/recurrent_lookup.py). After linear_of_embedding, G is the table of
    x-gates it made."""
    readers, maker = wiring(nodes)
    out, notes = list(nodes), []
    for lstm in nodes:
        look = maker.get(lstm.inputs[0])
        if not (type(lstm.fn) is LSTMSequence and look is not None
                and type(look.fn) is Embedding and look.fn.padding_idx is None
                and not look.fn.scale_grad_by_freq and len(trace.shapes[look.inputs[0]]) == 2
                and only_reader(lstm.inputs[0], readers, trace)):
            continue
        out[out.index(lstm)] = Node(LSTMLookupSequence(), [*look.inputs, *lstm.inputs[1:]],
                                    lstm.outputs, lstm.index)
        out.remove(look)
        notes.append(f"{lstm.name}#{lstm.index}({look.name}#{look.index}(ids, G)) -> "
                     "LSTMLookupSequence(ids, G)")
    return out, notes


# In this order: a ReLU moved below the pooling leaves conv -> pool to fuse, or to crop;
# a lookup's transpose goes into the lookup before any linear moves past it, and the
# linear into the lookup's table before the lookup goes into the recurrence; the heads'
# split is one op before a bias goes into it.
REWRITES: list[Rewrite] = [pool_before_relu, fuse_conv_pool, crop_for_pool, fold_batch_norm,
                           linear_of_embedding, linear_before_transpose, lookup_into_lstm,
                           split_heads, causal_blocks, bias_into_reader]


def rewrite(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """Every rewrite in turn; the nodes after, and the notes of every change."""
    notes: list[str] = []
    for step in REWRITES:
        nodes, more = step(nodes, trace)
        notes += more
    return nodes, notes
