"""A line search satisfying the strong Wolfe conditions (Nocedal & Wright, Numerical
Optimization, algorithms 3.5 and 3.6), with cubic interpolation: LBFGS's
`line_search_fn="strong_wolfe"`, step for step as PyTorch's, so runs agree."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Objective = Callable[[float], tuple[float, np.ndarray]]  # step -> (loss, flat gradient)


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: tuple[float, float] | None = None) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clipped to `bounds` (default: between the points); their midpoint if it has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square < 0:
        return (low + high) / 2
    d2 = math.sqrt(square)
    if x1 <= x2:
        point = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        point = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(point, low), high)


class _Point:
    """A trial step with its loss, gradient and slope along the direction."""

    def __init__(self, t: float, f: float, g: np.ndarray, slope: float) -> None:
        self.t, self.f, self.g, self.slope = t, f, g, slope


def strong_wolfe(objective: Objective, d: np.ndarray, t: float, f: float, g: np.ndarray,
                 slope: float, c1: float = 1e-4, c2: float = 0.9,
                 tolerance_change: float = 1e-9, max_ls: int = 25
                 ) -> tuple[float, np.ndarray, float, int]:
    """Search along `d` from the point with loss f, gradient g and slope g.d = `slope`,
    starting at step t. Returns (loss, gradient, step, evaluations)."""
    d_norm = float(np.abs(d).max())
    start = _Point(0.0, f, g.copy(), slope)
    prev = start
    new = _Point(t, *objective(t), 0.0)
    new.slope = float(new.g @ d)
    evals, it = 1, 0
    bracket: list[_Point] | None = None
    while it < max_ls:
        if new.f > f + c1 * new.t * slope or (it > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if abs(new.slope) <= -c2 * slope:
            return new.f, new.g, new.t, evals
        if new.slope >= 0:
            bracket = [prev, new]
            break
        # extrapolate: a cubic step, between just past t and ten times t
        step = cubic_minimum(prev.t, prev.f, prev.slope, new.t, new.f, new.slope,
                             (new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = new
        new = _Point(step, *objective(step), 0.0)
        new.slope = float(new.g @ d)
        evals, it = evals + 1, it + 1
    if bracket is None:  # out of evaluations: settle between the start and the last step
        bracket = [start, new]
    return _zoom(objective, d, bracket, f, slope, c1, c2, tolerance_change, d_norm, it,
                 max_ls, evals)


def _zoom(objective: Objective, d: np.ndarray, bracket: list[_Point], f: float,
          slope: float, c1: float, c2: float, tolerance_change: float, d_norm: float,
          it: int, max_ls: int, evals: int) -> tuple[float, np.ndarray, float, int]:
    """Shrink a bracket holding a step that satisfies the conditions."""
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insufficient = False
    while it < max_ls:
        a, b = bracket
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        t = cubic_minimum(a.t, a.f, a.slope, b.t, b.f, b.slope)
        lo_t, hi_t = min(a.t, b.t), max(a.t, b.t)
        eps = 0.1 * (hi_t - lo_t)
        # Too close to an end: move it inside, unless the last try already was.
        if min(hi_t - t, t - lo_t) < eps:
            if insufficient or t >= hi_t or t <= lo_t:
                t = hi_t - eps if abs(t - hi_t) < abs(t - lo_t) else lo_t + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        new = _Point(t, *objective(t), 0.0)
        new.slope = float(new.g @ d)
        evals, it = evals + 1, it + 1
        if new.f > f + c1 * t * slope or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if abs(new.slope) <= -c2 * slope:
                bracket[low] = new
                break
            if new.slope * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals
