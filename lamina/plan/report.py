"""What a program reports of itself: its memory, and its steps in words."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lamina.plan.buffers import slot_bytes

if TYPE_CHECKING:
    from lamina.plan.program import Program


def memory(program: Program) -> dict[str, int]:
    """Bytes of intermediate arrays: all at once, the live peak, the pooled slots, and
    those of them a training step frees at their last read (Program.releases)."""
    trace = program.trace
    nbytes = {v: int(np.prod(trace.shapes[v])) * np.dtype(trace.dtypes[v]).itemsize
              for n in program.forward for v in n.outputs}
    grad_bytes = sum(nbytes.get(v, 0) for v in program.grad_values if v in nbytes)
    steps = len(program.forward) + len(program.backward)
    born = {v: t for t, n in enumerate(program.forward) for v in n.outputs}
    live = np.zeros(steps + 1, np.int64)
    for v, b in born.items():
        live[b:program.live.last_use[v] + 1] += nbytes[v]
    sizes = slot_bytes(program.slot_meta)
    released = sum(sizes[s] for slots in program.releases.values() for s in slots)
    return {"values": len(nbytes), "bytes_without_reuse": sum(nbytes.values()) + grad_bytes,
            "bytes_with_reuse": int(live.max()) if len(live) else 0,
            "pooled_buffer_bytes": sum(sizes), "pooled_buffers": len(program.slot_meta),
            "released_buffer_bytes": released}


def describe(program: Program) -> str:
    """The steps: ops, values, slots, frees, kernel variants, pruned ops, rewrites and the
    backward steps with what each differentiates; the slots a step frees after its last
    read of them (Program.releases)."""
    trace = program.trace

    def name(v: int) -> str:
        kind = trace.kinds[v]
        return f"{kind}{v}" if kind != "op" else f"v{v}"

    def released(t: int) -> str:
        slots = program.releases.get(t)
        return f"   releases slot {' '.join(map(str, slots))}" if slots else ""

    lines = [f"forward ({len(program.forward)} ops, {len(program.pruned)} pruned):"]
    for t, n in enumerate(program.forward):
        outs = ", ".join(f"{name(v)} {tuple(trace.shapes[v])}"
                         + (f" [slot {program.slots[v]}]" if v in program.slots else "")
                         for v in n.outputs)
        frees = " ".join(name(v) for v in program.frees.get(t, ()))
        variant = getattr(n.fn, "variant", "")
        lines.append(f"  {t:3d} {n.name:<14} {', '.join(map(name, n.inputs))} -> {outs}"
                     + (f" <{variant}>" if variant else "")
                     + (f"   frees {frees}" if frees else "") + released(t))
    if program.pruned:
        lines.append("pruned: " + ", ".join(f"{n.name}#{n.index}" for n in program.pruned))
    if program.rewrites:
        lines.append("rewritten: " + ", ".join(program.rewrites))
    if program.train:
        lines.append(f"backward ({len(program.backward)} ops):")
        for j, n in enumerate(program.backward):
            targets = [name(v) for v, need in zip(n.inputs, n.fn.needs_input_grad) if need]
            t = len(program.forward) + j
            lines.append(f"  {t:3d} {n.name + '.backward':<23} -> d/d {', '.join(targets)}"
                         + released(t))
    return "\n".join(lines)
