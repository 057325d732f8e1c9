"""Stochastic gradient descent with momentum (PyTorch's rule)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina import fused
from lamina.fused import mkl_blas, numpy_blas
from lamina.optim.optimizer import Optimizer, require, torch_flags

COMPILED_FROM = 1 << 16  # elements: below, numba's call costs more than it saves


class SGD(Optimizer):
    """SGD with optional momentum, dampening, Nesterov momentum and L2 weight decay.

        g = grad + weight_decay * p
        b = g                                  (first step)
        b = momentum * b + (1 - dampening) * g (later steps)
        g = g + momentum * b if nesterov else b
        p = p - lr * g

    Examples:
        >>> opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        >>> loss.backward(); opt.step(); opt.zero_grad()
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    fused=fused)))
        # The BLAS the momentum steps go to ("mkl", "openblas") or False: _blas_chosen
        self._blas: str | bool | None = None

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        require(group, "momentum", group["momentum"] >= 0, "must be >= 0")
        require(group, "nesterov", not group["nesterov"] or (
            group["momentum"] > 0 and group["dampening"] == 0),
            "needs momentum > 0 and dampening == 0")

    def state_complete(self, state: dict[str, Any], group: dict[str, Any]) -> bool:
        return not group["momentum"] or "momentum_buffer" in state  # made by the first step

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        momentum = group["momentum"]
        buf = state.get("momentum_buffer")
        keep = 1 - group["dampening"]
        if momentum and buf is None:
            # PyTorch's first step sets the buffer to the gradient, dampening aside. A
            # buffer of zeros given the whole gradient is that, and lets the first step run
            # the one-pass updates below: NumPy's passes would leave a scratch array of
            # each parameter's size held for the process's life (see Optimizer.scratch).
            buf = state["momentum_buffer"] = np.zeros_like(param)
            keep = 1
        if (momentum and not group["nesterov"] and self._blas_chosen()
                and self._by_blas(param, grad, buf, group, keep)):
            return
        # Compiled where a parameter is large (below, numba's call costs more than the two
        # or four NumPy passes it saves: an RBM's few thousand weights) and numba is loaded.
        compiled = fused.loaded() if param.size >= COMPILED_FROM else None
        if compiled is not None and fused.fits(param, grad, *(() if not momentum else (buf,))):
            # One pass (lamina.fused) instead of four; the same formula, in float32, and
            # the same bits for each element in any share of the threads.
            f = np.float32
            fused.in_pieces(compiled.sgd, param, grad, param if buf is None else buf,
                            f(group["lr"]), f(group["weight_decay"]), f(momentum), f(keep),
                            bool(group["nesterov"]))
            return
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if momentum:
            buf *= momentum
            buf += grad if keep == 1 else keep * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        step = np.multiply(grad, group["lr"], out=self.scratch(param))
        param -= step

    def _update(self, updates: list[tuple[Any, ...]]) -> None:
        # On a BLAS each parameter's momentum step is whole: MKL and OpenBLAS thread it,
        # and lamina's pieces, each on one BLAS thread, cost their dispatch on top
        # (benchmarks/RESULTS.md, session 69).
        if self._blas_chosen() and all(
                group["momentum"] and not group["nesterov"] for _, _, _, group in updates):
            for update in updates:
                self.update_param(*update)
            return
        super()._update(updates)

    def _blas_chosen(self) -> str | bool:
        """The BLAS the momentum steps go to: MKL where it runs the products, else NumPy's
        OpenBLAS where it exports axpby; False where numba is loaded (a piece of a
        parameter below COMPILED_FROM takes NumPy's passes, whose bits numba's kernel
        gives and MKL's may not) or neither is there. Chosen at the first step and kept:
        an op that loads numba later (a larger validation batch) must not change the
        bits from then on, which a run resumed in a fresh process would not repeat."""
        if self._blas is None:
            self._blas = (False if fused.loaded() is not None else "mkl" if mkl_blas.ready()
                          else "openblas" if numpy_blas.available() else False)
        return self._blas

    def _by_blas(self, param: Any, grad: Any, buf: Any, group: dict[str, Any],
                 keep: float) -> bool:
        """The momentum step as two or three one-pass BLAS updates where MKL runs the
        products already or NumPy's OpenBLAS exports axpby (an MLP's step, which loads
        no numba), against NumPy's four passes or more: buf = momentum * buf + keep *
        (grad + wd * param), then param -= lr * buf. Returns whether it ran; the first
        call tells for all. Each parameter's update runs whole (see _update), except
        beside a group without momentum, whose pieces take MKL's too: MKL gives each
        element the same bits wherever its range starts or ends, so pieces over threads
        give one thread's result (OpenBLAS's decline inside a piece)."""
        blas = mkl_blas if self._blas == "mkl" else numpy_blas
        if not (fused.fits(param, grad, buf) and param.flags.writeable):
            return False
        if not blas.axpby(keep, grad, group["momentum"], buf):
            return False
        if group["weight_decay"]:
            blas.axpby(keep * group["weight_decay"], param, 1.0, buf)
        blas.axpby(-group["lr"], buf, 1.0, param)
        return True
