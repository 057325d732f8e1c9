"""A program's step as generated Python: one straight-line function, each value a local.

Running the ops from a loop over step tuples costs, per op, a list of inputs built from an
environment list, tuple unpacking, and a dictionary of pending gradients; in a training
step, where the GEMMs leave the caches cold, that bookkeeping is a visible share of a small
model's step. The generated function does only the calls: `v4 = f0(v0, v2, v3)`. Values are freed
where the program's liveness says (`v5 = None`), gradients once read, exactly as the loop
did, so memory use is unchanged. `Program.source` holds the text, for reading.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from lamina.plan.program import Program


def emit(program: Program) -> tuple[Any, str]:
    """The function `run(arrays, scale)` for the program, and its source."""
    trace = program.trace
    # The program holds the function, so the function holds it weakly: else the two form
    # a cycle, and a program dropped (a failed compile, an evicted batch shape) keeps its
    # buffers and trace until the garbage collector next runs.
    names: dict[str, Any] = {"np": np, "prog": weakref.proxy(program)}

    def value(v: int) -> str:
        if trace.kinds[v] == "const":
            names[f"c{v}"] = trace.arrays[v]
            return f"c{v}"
        return f"v{v}"

    lines = ["def run(arrays, scale):"]
    lines += [f"    v{v} = arrays[{i}]" for i, v in enumerate(trace.inputs)]
    for v, p in program.params:  # each parameter's array read afresh at every run
        names[f"p{v}"] = p
        lines.append(f"    v{v} = p{v}.array")
    for t, n in enumerate(program.forward):
        if t in program.remakes:
            lines.append(f"    prog.remake_slots({t})")
        names[f"f{t}"] = n.fn.forward
        call = f"f{t}({', '.join(value(v) for v in n.inputs)})"
        if len(n.outputs) == 1:
            out = f"v{n.outputs[0]}"
            lines += [f"    {out} = {call}",
                      f"    if {out}.__class__ is tuple:", f"        {out} = {out}[0]"]
        else:
            lines.append(f"    _y = {call}")
            lines += [f"    v{v} = _y[{i}]" for i, v in enumerate(n.outputs)]
            lines.append("    _y = None")
        if t in program.saving:  # without a backward, what the op keeps is never read
            names[f"k{t}"] = n.fn
            lines.append(f"    k{t}.saved_tensors = ()")
        lines += _frees(program, t)
    lines.append(f"    results = ({''.join(value(v) + ', ' for v in trace.outputs)})")
    lines += ["    if prog.after_forward is not None:", "        prog.after_forward()"]
    if program.train:
        lines += _backward(program, names)
    lines.append("    return results")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<plan program {id(program):#x}>", "exec"), names)  # noqa: S102
    return names.pop("run"), source  # not left in its own globals: that too is a cycle


def _frees(program: Program, t: int) -> list[str]:
    """Drop the values whose last use is step t (constants stay: the trace holds them),
    then the slots it read last where the program releases them (Program.releases)."""
    lines = [f"    v{v} = None" for v in program.frees.get(t, ())
             if program.trace.kinds[v] != "const"]
    return lines + ([f"    prog.release_slots({t})"] if t in program.releases else [])


def _backward(program: Program, names: dict[str, Any]) -> list[str]:
    trace = program.trace
    loss = program.loss
    lines = ["    given = set()", "    param_grad = prog._param_grad",
             "    if prog.collected is not None:", "        prog.collected.clear()",
             f"    g{loss} = np.full_like(v{loss}, prog.loss_weight * scale)"]
    pending = {loss}  # values whose gradient a local holds
    start = len(program.forward)
    for j, n in enumerate(program.backward):
        grads = []
        for k, v in enumerate(n.outputs):
            names[f"z{j}_{k}"] = (trace.shapes[v], trace.dtypes[v])
            if v in pending:
                # an op may have handed back None for it: zeros, as for an unread output
                lines += [f"    if g{v} is None:", f"        g{v} = np.zeros(*z{j}_{k})"]
                grads.append(f"g{v}")
            else:  # an output no later op read takes zeros
                grads.append(f"np.zeros(*z{j}_{k})")
        names[f"b{j}"], names[f"op{j}"] = n.fn.backward, n.fn
        # The op's saved arrays are read: dropped now, as eager backward frees its graph,
        # so that the arrays of its own (not the slots') do not last to the step's end.
        lines += [f"    _g = b{j}({', '.join(grads)})", f"    op{j}.saved_tensors = ()",
                  "    if _g.__class__ is not tuple:", "        _g = (_g,)"]
        lines += [f"    g{v} = None" for v in n.outputs if v in pending]
        pending -= set(n.outputs)
        for i, (v, need) in enumerate(zip(n.inputs, n.fn.needs_input_grad)):
            if not need:
                continue
            if trace.kinds[v] == "param":
                names[f"p{v}"] = trace.tensors[v]
                lines.append(f"    param_grad(p{v}, _g[{i}], given)")
            elif v in pending:
                lines.append(f"    g{v} = g{v} + _g[{i}]")
            else:
                lines.append(f"    g{v} = _g[{i}]")
                pending.add(v)
        lines.append("    _g = None")
        lines += _frees(program, start + j)
    return lines
