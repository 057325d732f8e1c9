"""The plan compiler's rewrites of attention (see rewrite.py): the split of a fused
projection into heads as one op, and causal attention by blocks of queries."""

from __future__ import annotations

from lamina.functions.array import Reshape, Split, Transpose
from lamina.functions.attention import AttentionSoftmax
from lamina.functions.product import MatMul
from lamina.plan.graph import a_reader, only_reader, transpose_axes, wiring
from lamina.plan.kernels.causal import CausalAttention, blocks_for
from lamina.plan.kernels.heads import SplitHeads
from lamina.plan.trace import Node, Trace


def split_heads(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """transpose(reshape(part, (B, T, H, D)), (0, 2, 1, 3)) for every part of an even split
    of x (B, T, parts * H * D) along its last axis -> SplitHeads(x): attention's queries,
    keys and values, contiguous, with one copy each way instead of strided views and two
    copies in backward (see plan/kernels/heads.py). The same values, copied."""
    readers, maker = wiring(nodes)
    reader = a_reader(nodes)
    out, notes = list(nodes), []
    for cut in nodes:
        shape = trace.shapes[cut.inputs[0]] if type(cut.fn) is Split else ()
        if len(shape) != 3 or cut.fn.axis % 3 != 2 or \
                len({trace.shapes[v] for v in cut.outputs}) != 1:
            continue
        chain, heads = [], set()
        for part in cut.outputs:
            view = reader.get(part) if only_reader(part, readers, trace) else None
            if view is None or type(view.fn) is not Reshape:
                break
            viewed = trace.shapes[view.outputs[0]]
            turn = reader.get(view.outputs[0])
            if len(viewed) != 4 or viewed[:2] != shape[:2] or turn is None or \
                    not only_reader(view.outputs[0], readers, trace) or \
                    type(turn.fn) is not Transpose or transpose_axes(turn, trace) != (0, 2, 1, 3):
                break
            chain += [view, turn]
            heads.add(viewed[2])
        if len(chain) != 2 * len(cut.outputs) or len(heads) != 1:
            continue
        fused = SplitHeads(len(cut.outputs), heads.pop())
        out[out.index(cut)] = Node(fused, cut.inputs, [t.outputs[0] for t in chain[1::2]],
                                   cut.index)
        for n in chain:
            out.remove(n)
        notes.append(f"Transpose(Reshape(Split#{cut.index}(x))) x {len(cut.outputs)} -> "
                     f"SplitHeads(x): {fused.heads} heads")
    return out, notes


def causal_blocks(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """matmul(causal_softmax(matmul(q, k^T)), v) -> CausalAttention(q, k, v) where nothing
    else reads the scores, k^T or the weights, and q, k and v are stacks alike of T rows
    each: the products by blocks of queries, none above the diagonal (see
    plan/kernels/causal.py). The same values and gradients, to float rounding."""
    readers, maker = wiring(nodes)
    reader = a_reader(nodes)
    out, notes = list(nodes), []
    for soft in nodes:
        if type(soft.fn) is not AttentionSoftmax or not soft.fn.causal:
            continue
        scores, weights = soft.inputs[0], soft.outputs[0]
        first, second = maker.get(scores), reader.get(weights)
        if first is None or type(first.fn) is not MatMul or second is None or \
                type(second.fn) is not MatMul or second.inputs[0] != weights or \
                not only_reader(scores, readers, trace) or \
                not only_reader(weights, readers, trace):
            continue
        q, kT = first.inputs
        turn, v = maker.get(kT), second.inputs[1]
        if turn is None or type(turn.fn) is not Transpose or \
                not only_reader(kT, readers, trace):
            continue
        k = turn.inputs[0]
        shapes = [trace.shapes[a] for a in (q, k, v)]
        ndim = len(shapes[0])
        if ndim < 2 or transpose_axes(turn, trace) != (*range(ndim - 2), ndim - 1, ndim - 2) or \
                any(len(s) != ndim or s[:-1] != shapes[0][:-1] for s in shapes) or \
                shapes[0][-1] != shapes[1][-1]:
            continue
        blocks = blocks_for(shapes[0][-2])
        if blocks < 2:
            continue
        out[out.index(second)] = Node(CausalAttention(soft.fn.scale, blocks), [q, k, v],
                                      second.outputs, second.index)
        for n in (first, soft, turn):
            out.remove(n)
        notes.append(f"{second.name}#{second.index}({soft.name}#{soft.index}(...), v) -> "
                     f"CausalAttention(q, k, v): {blocks} blocks of queries")
    return out, notes
