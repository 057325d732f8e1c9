"""Kernels of the layer ops: outputs into the plan's buffers, a choice of GEMM for linear,
and less kept for backward where the plan knows what stays alive anyway."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.functions.connection import Linear
from lamina.functions.loss import CrossEntropy
from lamina.functions.normalization import BatchNorm
from lamina.functions.pooling import MaxPool
from lamina.functions.recurrent import LSTMSequence
from lamina.fused.mkl_blas import matmul
from lamina.plan.kernels.base import Kernel, kernel_for


@kernel_for(Linear)
class LinearKernel(Kernel, Linear):
    writes_output = True
    # Which side of the GEMM the batch goes on: BLAS speed differs by shape and machine,
    # so a tuned plan times both.
    variants = ("x@W.T", "W@x.T")

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        # No errstate of its own: the program's step runs under one (Program.run).
        out = self.out_buffer()
        if x.ndim == 2 and len(x) == 1 and out is not None and not any(self.needs_input_grad):
            # One row and no backward (batch-1 inference): the product alone. The checks
            # and what they keep for backward cost as much as a small layer's GEMV, and
            # the trace has fixed the shapes already.
            y = fused.row_product(x, W, b, out)
            if y is not None:
                return y
            y = matmul(x, W.T, out=out)
            if b is not None:
                y += b
            return y
        self.check_and_keep(x, W)
        if x.ndim != 2 or self.variant != "W@x.T":
            return self.product(x, W, b, out)
        # y.T is C-contiguous: written into the buffer's transposed view.
        y = matmul(W, x.T, out=None if out is None else out.reshape(out.shape[::-1])).T
        if b is not None:
            y += b
        return y


@kernel_for(MaxPool)
class MaxPoolKernel(Kernel, MaxPool):
    writes_output = True

    def forward(self, x: Any) -> Any:
        return super().forward(x, out=self.out_buffer())


@kernel_for(BatchNorm)
class BatchNormKernel(Kernel, BatchNorm):
    writes_output = True

    def forward(self, x: Any, gamma: Any = None, beta: Any = None) -> Any:
        return super().forward(x, gamma, beta, out=self.out_buffer(like=x))


@kernel_for(CrossEntropy)
class CrossEntropyKernel(Kernel, CrossEntropy):
    reads_hints = frozenset({"inputs_kept"})

    def forward(self, x: Any, labels: Any) -> Any:
        rows = self.rows(x, labels)
        if 0 in self.inputs_kept and np.may_share_memory(rows, x):
            # The scores stay alive anyway (the plan's output): keep them, not their
            # log-probabilities, and redo the log-softmax in backward.
            return self.from_kept_scores(rows)
        return self.from_rows(rows, x)


@kernel_for(LSTMSequence)
class LSTMSequenceKernel(Kernel, LSTMSequence):
    """Activates the gates over the x-gates' own memory where nothing reads them later.
    Keeps c and tanh(c) for backward, as the eager op does: recomputing them there saved
    two (T, B, H) arrays but cost more time than they take to keep (benchmarks/RESULTS.md)."""

    reads_hints = frozenset({"dead_inputs"})

    def forward(self, xg: Any, h0: Any, c0: Any, W_hh: Any, b_hh: Any = None
                ) -> tuple[Any, Any, Any]:
        acts = xg if 0 in self.dead_inputs else xg.copy()
        hs, cs, tcs = self.recur(acts, h0, c0, W_hh, b_hh)
        self.save_for_backward(acts, hs, cs, tcs, W_hh)
        return hs[1:], hs[-1], cs[-1]
