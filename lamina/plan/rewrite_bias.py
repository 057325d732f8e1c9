"""The plan compiler's rewrite of a linear layer's bias (see rewrite.py): added by the op
that alone reads the layer's output, in that op's own pass (plan/kernels/bias.py)."""

from __future__ import annotations

import numpy as np

from lamina.functions.activation_gelu import GELU
from lamina.functions.connection import Linear
from lamina.functions.math import Add
from lamina.plan.graph import a_reader, only_reader, wiring
from lamina.plan.kernels.bias import BiasAdd, BiasGELU
from lamina.plan.kernels.heads import SplitHeads
from lamina.plan.trace import Node, Trace


def bias_into_reader(nodes: list[Node], trace: Trace) -> tuple[list[Node], list[str]]:
    """reader(linear(x, W, b)) -> reader(linear(x, W), b), the reader GELU (the erf form:
    BiasGELU), SplitHeads or a sum with another array of the output's shape (BiasAdd),
    where nothing else reads the linear's output and it is float32: no pass of its own
    over the output for the bias. The same values and gradients (see
    plan/kernels/bias.py)."""
    readers, _ = wiring(nodes)
    reader = a_reader(nodes)
    out, notes, taken = list(nodes), [], set()  # readers given a bias already
    for lin in nodes:
        if type(lin.fn) is not Linear or len(lin.inputs) != 3:
            continue
        z = lin.outputs[0]
        use = reader.get(z)
        if use is None or id(use) in taken or not only_reader(z, readers, trace) or \
                np.dtype(trace.dtypes[z]) != np.float32 or \
                np.dtype(trace.dtypes[lin.inputs[2]]) != np.float32:
            continue
        other = [v for v in use.inputs if v != z]
        if type(use.fn) is GELU and use.fn.approximate == "none" and not other:
            fn, inputs = BiasGELU(), [z, lin.inputs[2]]
        elif type(use.fn) is SplitHeads and not other:
            fn, inputs = SplitHeads(use.fn.parts, use.fn.heads), [z, lin.inputs[2]]
        elif type(use.fn) is Add and len(other) == 1 and \
                trace.shapes[other[0]] == trace.shapes[z] and \
                np.dtype(trace.dtypes[other[0]]) == np.float32:
            fn, inputs = BiasAdd(), [other[0], z, lin.inputs[2]]
        else:
            continue
        out[out.index(lin)] = Node(Linear(), lin.inputs[:2], [z], lin.index)
        out[out.index(use)] = Node(fn, inputs, use.outputs, use.index)
        taken.add(id(use))  # a sum of two linears' outputs takes one bias (LSTMCell's)
        notes.append(f"{use.name}#{use.index}({lin.name}#{lin.index}"
                     f"(x, W, b)) -> {type(fn).__name__}({lin.name}(x, W), b)")
    return out, notes
