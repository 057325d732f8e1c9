"""L-BFGS (Liu & Nocedal, 1989), PyTorch's optimizer: quasi-Newton steps over all the
parameters as one flat vector, from a closure that recomputes the loss."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from lamina.autograd.grad_mode import enable_grad
from lamina.autograd.tensor import Tensor
from lamina.optim.line_search import strong_wolfe
from lamina.optim.optimizer import Optimizer


class LBFGS(Optimizer):
    """L-BFGS with PyTorch's arguments, rule and state; `step(closure)` runs up to
    `max_iter` iterations and returns the closure's first loss.

    Args:
        lr: the step length (the first iteration's is scaled by 1 / sum|grad|).
        max_iter, max_eval: iterations per step, and closure calls (default
            max_iter * 5 / 4).
        tolerance_grad, tolerance_change: stop when the largest gradient element, or the
            change of loss or of the parameters, falls below these.
        history_size: the curvature pairs kept.
        line_search_fn: None (fixed steps) or "strong_wolfe".

    Examples:
        >>> opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
    """

    state_like_params = False  # its directions and gradients are of all parameters, flat

    def __init__(self, params: Iterable[Any], lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe'; got "
                             f"{line_search_fn!r}")
        super().__init__(params, dict(
            lr=lr, max_iter=max_iter, max_eval=max_eval or max_iter * 5 // 4,
            tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
            history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.array.size, p.dtype) if p.grad is None
                               else p.grad.array.reshape(-1) for p in self._params])

    def _move(self, t: float, d: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p.array.size
            p.array += t * d[offset:offset + n].reshape(p.shape)
            offset += n

    def _evaluate(self, closure: Callable[[], Any], t: float, *, d: np.ndarray
                  ) -> tuple[float, np.ndarray]:
        """The loss and gradient at step t along d; the parameters are put back."""
        saved = [p.array.copy() for p in self._params]
        self._move(t, d)
        loss = float(closure())
        grad = self._flat_grad()
        for p, a in zip(self._params, saved):
            p.array[...] = a
        return loss, grad

    def step(self, closure: Any = None) -> Any:
        """Run up to max_iter iterations; `closure` zeroes the gradients, computes the
        loss, calls backward and returns the loss."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss (see the "
                               "class's example)")
        group = self.param_groups[0]
        closure = enable_grad()(closure)
        state = self.state.setdefault(self._params[0], {"func_evals": 0, "n_iter": 0})
        first = closure()
        loss = float(first)
        evals = 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if np.abs(grad).max() <= group["tolerance_grad"]:
            return first
        d, t = state.get("d"), state.get("t")
        history = state.setdefault("history", [])  # (y, s, 1 / y.s), oldest first
        h_diag = state.get("H_diag", 1.0)
        prev_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, h_diag = -grad, 1.0
                history.clear()
            else:
                y, s = grad - prev_grad, d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(history) == group["history_size"]:
                        history.pop(0)
                    history.append((y, s, 1.0 / ys))
                    h_diag = ys / float(y @ y)
                d = _two_loop(-grad, history, h_diag)
            prev_grad, prev_loss = grad.copy(), loss
            t = (min(1.0, 1.0 / np.abs(grad).sum()) * group["lr"] if state["n_iter"] == 1
                 else group["lr"])
            slope = float(grad @ d)
            if slope > -group["tolerance_change"]:
                break
            if group["line_search_fn"] == "strong_wolfe":
                loss, grad, t, ls_evals = strong_wolfe(
                    functools.partial(self._evaluate, closure, d=d), d, t, loss, grad, slope)
                self._move(t, d)
                done = np.abs(grad).max() <= group["tolerance_grad"]
            else:
                self._move(t, d)
                ls_evals, done = 0, False
                if n_iter != group["max_iter"]:
                    loss = float(closure())
                    grad = self._flat_grad()
                    done = np.abs(grad).max() <= group["tolerance_grad"]
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == group["max_iter"] or evals >= group["max_eval"] or done
                    or np.abs(d * t).max() <= group["tolerance_change"]
                    or abs(loss - prev_loss) < group["tolerance_change"]):
                break
        state.update(d=d, t=t, H_diag=h_diag, prev_flat_grad=prev_grad, prev_loss=prev_loss)
        return first


def _two_loop(q: np.ndarray, history: list[tuple[np.ndarray, np.ndarray, float]],
              h_diag: float) -> np.ndarray:
    """The inverse-Hessian estimate applied to q (Nocedal & Wright, algorithm 7.4)."""
    alphas = []
    for y, s, rho in reversed(history):
        a = float(s @ q) * rho
        q = q - a * y
        alphas.append(a)
    r = q * h_diag
    for (y, s, rho), a in zip(history, reversed(alphas)):
        r = r + s * (a - float(y @ r) * rho)
    return r
