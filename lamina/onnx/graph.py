"""The graph under construction: nodes, initializers, unique names, and the sizes of every
traced value, some of them symbolic (a dynamic axis's size, known only at run time).

A size is an int, or a `Size`: a whole multiple of a product of dynamic axes' sizes (the
batch, the batch times the sequence length). It is found by tracing the model once at the
example's sizes and once more per dynamic axis, grown by one: a dimension that follows an
axis's growth depends on it. An exporter asks `ctx.shape_tensor(value)` for a value's
shape as a run-time tensor wherever ONNX takes one (Reshape, Expand, ConstantOfShape).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


class ExportError(ValueError):
    """A model (or one of its ops or layers) cannot be written as ONNX; the message names it."""


@dataclass(frozen=True)
class Size:
    """`factor` times the product of the named dynamic axes' sizes."""

    factor: int
    symbols: tuple[str, ...]

    def __str__(self) -> str:
        return "*".join(([str(self.factor)] if self.factor != 1 else []) + list(self.symbols))


Dim = int | Size


def infer_dims(base: Sequence[int], grown: dict[str, Sequence[int]],
               sizes: dict[str, tuple[int, int]]) -> list[Dim | None]:
    """Each axis of a value as an int or a Size, from its shape at the example's sizes
    (`base`) and with each dynamic axis grown (`grown[symbol]`); `sizes[symbol]` is that
    axis's (example, grown) size. None where the growth is no whole multiple."""
    out: list[Dim | None] = []
    for d, n in enumerate(base):
        symbols = tuple(s for s in sizes if grown[s][d] != n)
        if not symbols:
            out.append(int(n))
            continue
        product = int(np.prod([sizes[s][0] for s in symbols]))
        factor, rest = divmod(int(n), product)
        fits = rest == 0 and factor > 0 and all(
            grown[s][d] == factor * product // sizes[s][0] * sizes[s][1] for s in symbols)
        out.append(Size(factor, symbols) if fits else None)
    return out


class Context:
    """Collects nodes and initializers while ops and layers export themselves."""

    def __init__(self, opset: int) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper, self.opset = helper, numpy_helper, opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: set[str] = set()
        self.symbol_at: dict[str, str] = {}  # symbol -> its size as a 1-element int64 tensor
        self.where = ""  # the traced op being exported, for messages

    def name(self, hint: str) -> str:
        base = hint.replace(".", "_").replace("/", "_") or "v"
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name

    def constant(self, hint: str, array: Any) -> str:
        name = self.name(hint)
        self.initializers.append(self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], hint: str, n_outputs: int = 1,
             **attrs: Any) -> list[str]:
        outputs = [self.name(f"{hint}_{op}{'' if n_outputs == 1 else i}")
                   for i in range(n_outputs)]
        self.nodes.append(self.helper.make_node(op, inputs, outputs, name=self.name(hint + op),
                                                **attrs))
        return outputs

    def ints(self, hint: str, values: Sequence[int]) -> str:
        return self.constant(f"{hint}.ints", np.array(list(values), np.int64))

    def cast(self, name: str, have: Any, want: Any, hint: str) -> str:
        """`name` (of dtype `have`) as dtype `want`: itself where they are one."""
        if np.dtype(have) == np.dtype(want):
            return name
        return self.node("Cast", [name], hint,
                         to=self.helper.np_dtype_to_tensor_dtype(np.dtype(want)))[0]

    def fail(self, message: str) -> ExportError:
        """An ExportError naming the op being exported and the line that called it."""
        return ExportError(f"{self.where}: {message}")

    # -- sizes --------------------------------------------------------------------------------
    def shape_tensor(self, dims: Sequence[Dim | None], hint: str) -> str:
        """A 1-D int64 tensor of these sizes at run time: a constant where none is dynamic."""
        if None in dims:
            raise self.fail(f"a size grows with the dynamic axes in no whole multiple "
                            f"({', '.join('?' if d is None else str(d) for d in dims)}); "
                            "export with fixed sizes (no dynamic_axes) or reshape by whole "
                            "multiples of the batch")
        if all(isinstance(d, int) for d in dims):
            return self.ints(hint, dims)
        parts = []
        for d in dims:
            if isinstance(d, int):
                parts.append(self.ints(hint, [d]))
                continue
            part = self.symbol_at[d.symbols[0]]
            for s in d.symbols[1:]:
                (part,) = self.node("Mul", [part, self.symbol_at[s]], hint)
            if d.factor != 1:
                (part,) = self.node("Mul", [part, self.ints(hint, [d.factor])], hint)
            parts.append(part)
        return self.node("Concat", parts, hint, axis=0)[0]

