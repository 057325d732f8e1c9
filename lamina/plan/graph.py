"""The graph passes of the plan compiler that need no op knowledge: prune what no requested
output depends on, and order the rest so each op runs after the ops making its inputs."""

from __future__ import annotations

from collections import defaultdict, deque

from lamina.plan.trace import Node, Trace


def wiring(nodes: list[Node]) -> tuple[dict[int, int], dict[int, Node]]:
    """How many nodes read each value, and the node making each."""
    readers: dict[int, int] = defaultdict(int)
    for n in nodes:
        for v in n.inputs:
            readers[v] += 1
    return readers, {v: n for n in nodes for v in n.outputs}


def a_reader(nodes: list[Node]) -> dict[int, Node]:
    """A node reading each value: the one, where only_reader holds."""
    return {v: n for n in nodes for v in n.inputs}


def only_reader(v: int, readers: dict[int, int], trace: Trace) -> bool:
    """Whether one node alone reads value v, and the plan does not return it."""
    return readers[v] == 1 and v not in trace.outputs


def transpose_axes(turn: Node, trace: Trace) -> tuple[int, ...] | None:
    """A transpose node's axes, non-negative; None for one that gives none (reversed)."""
    ndim = len(trace.shapes[turn.inputs[0]])
    return None if turn.fn.axes is None else tuple(a % ndim for a in turn.fn.axes)


def prune(nodes: list[Node], outputs: list[int]) -> list[Node]:
    """The nodes that some requested output depends on, in their order."""
    maker = {v: n for n in nodes for v in n.outputs}
    wanted, stack, kept = set(outputs), list(outputs), set()
    while stack:
        n = maker.get(stack.pop())
        if n is None or id(n) in kept:
            continue
        kept.add(id(n))
        for v in n.inputs:
            if v not in wanted:
                wanted.add(v)
                stack.append(v)
    return [n for n in nodes if id(n) in kept]


def toposort(nodes: list[Node]) -> list[Node]:
    """Kahn's algorithm: run a node once every node making its inputs has run; among the
    ready ones, in the order given."""
    maker = {v: n for n in nodes for v in n.outputs}
    indegree = {id(n): len({maker[v].index for v in n.inputs if v in maker}) for n in nodes}
    users: dict[int, list[Node]] = defaultdict(list)
    for n in nodes:
        for p in {id(maker[v]): maker[v] for v in n.inputs if v in maker}.values():
            users[id(p)].append(n)
    ready = deque(n for n in nodes if indegree[id(n)] == 0)
    order = []
    while ready:
        n = ready.popleft()
        order.append(n)
        for u in users[id(n)]:
            indegree[id(u)] -= 1
            if indegree[id(u)] == 0:
                ready.append(u)
    assert len(order) == len(nodes), "a trace is acyclic by construction"
    return order
