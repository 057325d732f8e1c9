"""Recurrent layers: RNN, LSTM and GRU with PyTorch's parameter names, layouts and gate order."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


class _Recurrent(Layer):
    gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, bias: bool,
                 batch_first: bool, output: str = "tuple", stateful: bool = False) -> None:
        super().__init__()
        if output not in OUTPUTS:
            raise ValueError(f"{type(self).__name__}: output must be one of {OUTPUTS}; "
                             f"got {output!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.output, self.stateful = output, stateful
        self.state: Any = None  # the last final state, when stateful
        g, h = self.gates * hidden_size, hidden_size
        for k in range(num_layers):
            fan_in = input_size if k == 0 else h
            setattr(self, f"weight_ih_l{k}", Parameter(np.empty((g, fan_in), np.float32)))
            setattr(self, f"weight_hh_l{k}", Parameter(np.empty((g, h), np.float32)))
            if bias:
                setattr(self, f"bias_ih_l{k}", Parameter(np.empty(g, np.float32)))
                setattr(self, f"bias_hh_l{k}", Parameter(np.empty(g, np.float32)))
        bound = 1 / math.sqrt(hidden_size)  # PyTorch: every weight and bias U(-1/sqrt(H), ..)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, k: int) -> tuple[Any, ...]:
        return tuple(getattr(self, f"{n}_l{k}", None)
                     for n in ("weight_ih", "bias_ih", "weight_hh", "bias_hh"))

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) != 3 or shape[2] == self.input_size:
            return None
        return f"input_size={shape[2]}"

    def _check(self, x: Tensor, state: Any) -> int:
        name = type(self).__name__
        if x.ndim != 3 or x.shape[2] != self.input_size:
            layout = "(B, T, input_size)" if self.batch_first else "(T, B, input_size)"
            raise ShapeError(f"{name}: expected input {layout} with input_size "
                             f"{self.input_size}; got shape {x.shape}")
        batch = x.shape[0] if self.batch_first else x.shape[1]
        want = (self.num_layers, batch, self.hidden_size)
        for s in state if isinstance(state, tuple) else (state,):
            if s is not None and s.shape != want:
                raise ShapeError(f"{name}: expected initial state of shape {want}; got {s.shape}")
        return batch

    def reset_state(self) -> None:
        """Forget the carried state: the next sequence starts from zeros."""
        self.state = None

    def detach_state(self) -> None:
        """Keep the carried state's values but cut the graph behind it (truncated BPTT)."""
        if self.state is not None:
            self.state = _map_state(self.state, lambda t: t.detach())

    def _initial(self, state: Any, batch: int) -> Any:
        """The given state; else the carried one (stateful, same batch size); else None."""
        if state is not None or not self.stateful or self.state is None:
            return state
        carried = self.state if isinstance(self.state, tuple) else (self.state,)
        return self.state if carried[0].shape[1] == batch else None

    def _result(self, out: Tensor, final: Any) -> Any:
        if self.stateful:
            self.state = final
        if self.output == "sequence":
            return out
        if self.output == "last":
            return out[:, -1] if self.batch_first else out[-1]
        return out, final

    def _zeros(self, batch: int, like: Tensor) -> Tensor:
        return Tensor(np.zeros((self.num_layers, batch, self.hidden_size), like.dtype))

    def _run(self, x: Tensor, states: list[tuple[Tensor, ...]]) -> tuple[Tensor, list]:
        """Run every layer over time; states[k] is layer k's initial state tuple."""
        seq = x if not self.batch_first else x.transpose(0, 1)  # time-major inside
        finals = []
        for k in range(self.num_layers):
            W_ih, b_ih, W_hh, b_hh = self._weights(k)
            # The input projection for all time steps is one GEMM, outside the time loop.
            steps = F.unbind(F.linear(seq, W_ih, b_ih), 0)
            state = states[k]
            outs = []
            for xt in steps:
                state = self._step(xt, state, W_hh, b_hh)
                outs.append(state[0])
            finals.append(state)
            seq = F.stack(outs, 0)
        out = seq.transpose(0, 1) if self.batch_first else seq
        return out, finals

    def forward(self, x: Tensor, h0: Tensor | None = None) -> Any:
        """Run the layers over x from h0 (or the carried state, or zeros); see the class."""
        batch = self._check(x, h0)
        h0 = self._initial(h0, batch)
        h0 = h0 if h0 is not None else self._zeros(batch, x)
        out, finals = self._run(x, [(h,) for h in F.unbind(h0, 0)])
        return self._result(out, F.stack([s[0] for s in finals], 0))

    def get_config(self) -> dict[str, Any]:
        return {"input_size": self.input_size, "hidden_size": self.hidden_size,
                "num_layers": self.num_layers, "bias": self.bias, "batch_first": self.batch_first,
                "output": self.output, "stateful": self.stateful}


OUTPUTS = ("tuple", "sequence", "last")
Output = Literal["tuple", "sequence", "last"]

def _map_state(state: Any, fn: Any) -> Any:
    return tuple(fn(t) for t in state) if isinstance(state, tuple) else fn(state)


@register_layer("RNN")
class RNN(_Recurrent):
    """Elman RNN: h_t = act(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh), act tanh or relu.

    Shapes: input (T, B, input_size) (the default, as PyTorch's) or (B, T, input_size)
    with batch_first;
    h0 (num_layers, B, hidden_size). Returns (output (B, T, hidden_size), h_n).

    Args (beyond PyTorch's):
        output: "tuple" returns (output, state) as PyTorch does; "sequence" returns the
            output alone (for use in a Sequential); "last" returns the last step (B, H).
        stateful: carry the final state into the next call; reset_state() and
            detach_state() control it (truncated BPTT uses both). A call with a batch of
            another size (an epoch's smaller last batch, sampling one sequence) starts
            from zeros: the carried state belongs to other sequences.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: Literal["tanh", "relu"] = "tanh", bias: bool = True,
                 batch_first: bool = False, output: Output = "tuple",
                 stateful: bool = False) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu'; got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, output, stateful)
        self.nonlinearity = nonlinearity

    def _step(self, xt: Tensor, state: tuple[Tensor], W_hh: Tensor, b_hh: Any) -> tuple[Tensor]:
        pre = xt + F.linear(state[0], W_hh, b_hh)
        return (F.tanh(pre) if self.nonlinearity == "tanh" else F.relu(pre),)


    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "nonlinearity": self.nonlinearity}


@register_layer("LSTM")
class LSTM(_Recurrent):
    """Long short-term memory, gates i, f, g, o stacked in weight_ih_l{k} (4H, in) as in PyTorch.

    Shapes: input (B, T, input_size) (batch_first) or (T, B, input_size); optional state
    (h0, c0), each (num_layers, B, hidden_size). Returns (output, (h_n, c_n)); `output` and
    `stateful` work as in RNN.
    """

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, output: Output = "tuple",
                 stateful: bool = False) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, output, stateful)

    def _run(self, x: Tensor, states: list[tuple[Tensor, ...]]) -> tuple[Tensor, list]:
        # The whole time loop of each layer is one fused op (F.lstm_sequence).
        seq = x if not self.batch_first else x.transpose(0, 1)
        finals = []
        for k in range(self.num_layers):
            W_ih, b_ih, W_hh, b_hh = self._weights(k)
            h0, c0 = states[k]
            seq, hT, cT = F.lstm_sequence(F.linear(seq, W_ih, b_ih), h0, c0, W_hh, b_hh)
            finals.append((hT, cT))
        return (seq.transpose(0, 1) if self.batch_first else seq), finals

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None) -> Any:
        batch = self._check(x, state)
        state = self._initial(state, batch)
        h0, c0 = state if state is not None else (self._zeros(batch, x), self._zeros(batch, x))
        out, finals = self._run(x, list(zip(F.unbind(h0, 0), F.unbind(c0, 0))))
        final = (F.stack([s[0] for s in finals], 0), F.stack([s[1] for s in finals], 0))
        return self._result(out, final)


@register_layer("GRU")
class GRU(_Recurrent):
    """Gated recurrent unit, gates r, z, n stacked in weight_ih_l{k} (3H, in) as in PyTorch.

    Shapes: input (B, T, input_size) (batch_first) or (T, B, input_size); h0
    (num_layers, B, hidden_size). Returns (output, h_n); `output` and `stateful` work as in
    RNN.
    """

    gates = 3

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, output: Output = "tuple",
                 stateful: bool = False) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, output, stateful)

    def _step(self, xt: Tensor, state: tuple[Tensor], W_hh: Tensor, b_hh: Any) -> tuple[Tensor]:
        return (F.gru_cell(xt, F.linear(state[0], W_hh, b_hh), state[0]),)

