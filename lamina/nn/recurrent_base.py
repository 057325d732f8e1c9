"""What RNN, LSTM and GRU share: PyTorch's parameters (per layer and direction), and the run
over layers, directions, dropout between layers, packed sequences and carried state."""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.recurrent_lookup import input_projection
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.utils.rnn import PackedSequence, packed_like, padded_sorted

OUTPUTS = ("tuple", "sequence", "last")
Output = Literal["tuple", "sequence", "last"]
State = tuple[Tensor, ...]  # (h,) or an LSTM's (h, c), each (B, H)


class Recurrent(Layer):
    """The base of the recurrent layers; a subclass sets `gates` and defines `_step`."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, bias: bool,
                 batch_first: bool, dropout: float, bidirectional: bool, proj_size: int,
                 output: str, stateful: bool) -> None:
        super().__init__()
        name = type(self).__name__
        if output not in OUTPUTS:
            raise ValueError(f"{name}: output must be one of {OUTPUTS}; got {output!r}")
        if input_size < 1 or hidden_size < 1 or num_layers < 1:
            raise ValueError(f"{name}: input_size, hidden_size and num_layers must be >= 1; got "
                             f"{input_size}, {hidden_size} and {num_layers}")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout must be in [0, 1]; got {dropout}")
        if not 0 <= proj_size < hidden_size:
            raise ValueError(f"{name}: proj_size ({proj_size}) must be >= 0 and smaller than "
                             f"hidden_size ({hidden_size})")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout acts between recurrent layers, so dropout="
                          f"{dropout} with num_layers=1 does nothing", stacklevel=3)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, dropout
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self.output, self.stateful = output, stateful
        self.state: Any = None  # the last final state, when stateful
        g, h, out = self.gates * hidden_size, hidden_size, proj_size or hidden_size
        for k in range(num_layers):
            fan_in = input_size if k == 0 else out * self.directions
            for suffix in self._suffixes(k):
                setattr(self, f"weight_ih{suffix}", Parameter(np.empty((g, fan_in), np.float32)))
                setattr(self, f"weight_hh{suffix}", Parameter(np.empty((g, out), np.float32)))
                if bias:
                    setattr(self, f"bias_ih{suffix}", Parameter(np.empty(g, np.float32)))
                    setattr(self, f"bias_hh{suffix}", Parameter(np.empty(g, np.float32)))
                if proj_size:
                    setattr(self, f"weight_hr{suffix}",
                            Parameter(np.empty((proj_size, h), np.float32)))
        bound = 1 / math.sqrt(hidden_size)  # PyTorch: every weight and bias U(-1/sqrt(H), ..)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _suffixes(self, k: int) -> list[str]:
        return [f"_l{k}", f"_l{k}_reverse"][:self.directions]

    def _weights(self, suffix: str) -> tuple[Any, ...]:
        return tuple(getattr(self, f"{n}{suffix}", None)
                     for n in ("weight_ih", "bias_ih", "weight_hh", "bias_hh", "weight_hr"))

    def _state_sizes(self) -> tuple[int, ...]:
        """The feature size of each state tensor: h (the projection's, if any)."""
        return (self.proj_size or self.hidden_size,)

    # -- the call --------------------------------------------------------------------------
    def forward(self, input: Any, hx: Any = None) -> Any:
        """Run the layers over `input` from `hx` (or the carried state, or zeros)."""
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:
            x, lengths = padded_sorted(packed)
            hx = _map_state(hx, lambda t: _reorder(t, packed.sorted_indices))
        else:
            x, lengths = self._time_major(input), None
        unbatched = packed is None and input.ndim == 2
        if unbatched:
            hx = _map_state(hx, lambda t: t.unsqueeze(1))
        batch = x.shape[1]
        hx = self._initial(self._checked_state(hx, batch), batch)
        states = self._split(hx, batch, x)
        out, finals = self._layers(x, states, lengths)
        final = tuple(F.stack([f[i] for f in finals], 0) for i in range(len(finals[0])))
        final = final if len(final) > 1 else final[0]
        if packed is not None:
            out = packed_like(out, packed)
            final = _map_state(final, lambda t: _reorder(t, packed.unsorted_indices))
        elif self.batch_first:
            out = out.transpose(0, 1)
        if self.stateful:
            self.state = final
        if unbatched:
            out = out.squeeze(1) if not self.batch_first else out.squeeze(0)
            final = _map_state(final, lambda t: t.squeeze(1))
        return self._result(out, final)

    def _layers(self, x: Tensor, states: list[State], lengths: np.ndarray | None
                ) -> tuple[Tensor, list[State]]:
        """Every layer and direction over time-major x; states[k * D + d] starts layer k's
        direction d. Returns the last layer's output and every final state."""
        mask = None if lengths is None else [
            Tensor((t < lengths)[:, None].astype(x.dtype)) for t in range(x.shape[0])]
        finals: list[State] = []
        for k in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(self._suffixes(k)):
                seq = x if d == 0 else _reverse(x, lengths)
                y, final = self._direction(seq, states[k * self.directions + d], suffix, mask)
                outs.append(y if d == 0 else _reverse(y, lengths))
                finals.append(final)
            x = outs[0] if len(outs) == 1 else F.concat(outs, -1)
            if self.dropout and self.training and k < self.num_layers - 1:
                x = F.dropout(x, self.dropout)
        return x, finals

    def _direction(self, x: Tensor, state: State, suffix: str, mask: list[Tensor] | None
                   ) -> tuple[Tensor, State]:
        """One direction of one layer over time: outputs (T, B, H) and the final state.
        Where `mask` is given, a finished sequence keeps its state."""
        W_ih, b_ih, W_hh, b_hh, W_hr = self._weights(suffix)
        # The input projection for all time steps is one GEMM, outside the time loop.
        steps = F.unbind(input_projection(x, W_ih, b_ih), 0)
        outs = []
        for t, xt in enumerate(steps):
            new = self._step(xt, state, W_hh, b_hh, W_hr)
            if mask is not None:
                new = tuple(old + (n - old) * mask[t] for n, old in zip(new, state))
            state = new
            outs.append(state[0])
        return F.stack(outs, 0), state

    def _step(self, xt: Tensor, state: State, W_hh: Tensor, b_hh: Any, W_hr: Any) -> State:
        raise NotImplementedError

    # -- shapes and state ------------------------------------------------------------------
    def _time_major(self, x: Any) -> Tensor:
        name, layout = type(self).__name__, "(B, T, F)" if self.batch_first else "(T, B, F)"
        shape = tuple(getattr(x, "shape", ()))
        if len(shape) not in (2, 3) or shape[-1] != self.input_size:
            raise ShapeError(f"{name}: expected input {layout} or unbatched (T, F), with F = "
                             f"input_size = {self.input_size}; got shape {shape}")
        if x.ndim == 2:
            return x.unsqueeze(1)
        return x.transpose(0, 1) if self.batch_first else x

    def _checked_state(self, hx: Any, batch: int) -> Any:
        for s, size in zip(hx if isinstance(hx, tuple) else (hx,), self._state_sizes()):
            want = (self.num_layers * self.directions, batch, size)
            if s is not None and tuple(s.shape) != want:
                raise ShapeError(f"{type(self).__name__}: expected initial state of shape "
                                 f"{want}; got {tuple(s.shape)}")
        return hx

    def _split(self, hx: Any, batch: int, like: Tensor) -> list[State]:
        """The initial state as one tuple per layer and direction (zeros where None)."""
        sizes = self._state_sizes()
        parts = hx if isinstance(hx, tuple) else (hx,) * len(sizes)
        full = [F.unbind(p, 0) if p is not None
                else [Tensor(np.zeros((batch, size), like.dtype))] * self.num_layers
                * self.directions for p, size in zip(parts, sizes)]
        return list(zip(*full))

    def _initial(self, state: Any, batch: int) -> Any:
        """The given state; else the carried one (stateful, same batch size); else None."""
        if state is not None or not self.stateful or self.state is None:
            return state
        carried = self.state if isinstance(self.state, tuple) else (self.state,)
        return self.state if carried[0].shape[1] == batch else None

    def _result(self, out: Any, final: Any) -> Any:
        if self.output == "sequence":
            return out
        if self.output == "last":
            return out[:, -1] if self.batch_first else out[-1]
        return out, final

    def reset_state(self) -> None:
        """Forget the carried state: the next sequence starts from zeros."""
        self.state = None

    def detach_state(self) -> None:
        """Keep the carried state's values but cut the graph behind it (truncated BPTT)."""
        if self.state is not None:
            self.state = _map_state(self.state, lambda t: t.detach())

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) != 3 or shape[2] == self.input_size:
            return None
        return f"input_size={shape[2]}"

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        defaults = {"num_layers": 1, "bias": True, "batch_first": False, "dropout": 0.0,
                    "bidirectional": False, "proj_size": 0, "output": "tuple",
                    "stateful": False}
        for key, default in defaults.items():
            if getattr(self, key) != default:
                text += f", {key}={getattr(self, key)!r}"
        return text

    def get_config(self) -> dict[str, Any]:
        return {"input_size": self.input_size, "hidden_size": self.hidden_size,
                "num_layers": self.num_layers, "bias": self.bias, "batch_first": self.batch_first,
                "dropout": self.dropout, "bidirectional": self.bidirectional,
                "output": self.output, "stateful": self.stateful}


def _map_state(state: Any, fn: Any) -> Any:
    if state is None:
        return None
    return tuple(fn(t) for t in state) if isinstance(state, tuple) else fn(state)


def _reorder(t: Tensor, order: Tensor | None) -> Tensor:
    """A state (L * D, B, H) with its batch rows in `order` (None: as it is)."""
    return t if order is None else t[:, order.numpy()]


def _reverse(x: Tensor, lengths: np.ndarray | None) -> Tensor:
    """Time-major x with each sequence reversed within its own length (padding stays at
    the end, where the mask keeps the state)."""
    if lengths is None:
        return x.flip(0)
    steps = np.arange(x.shape[0])[:, None]
    index = np.where(steps < lengths, lengths - 1 - steps, steps)
    return x[index, np.arange(x.shape[1])[None, :]]
