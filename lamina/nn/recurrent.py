"""Recurrent layers: RNN, LSTM and GRU with PyTorch's arguments, parameter names, layouts,
gate order and results (packed sequences, bidirectional, dropout, LSTM projections)."""

from __future__ import annotations

from typing import Any, Literal

import lamina.functions as F
from lamina.autograd.grad_mode import is_grad_enabled
from lamina.autograd.tensor import Tensor
from lamina.functions.recurrent import LSTMSequence
from lamina.functions.recurrent_gru import GRUSequence
from lamina.functions.recurrent_layer import LSTMInference
from lamina.functions.recurrent_lookup import LSTMLookupSequence, input_projection, looked_up
from lamina.nn.recurrent_base import Output, Recurrent, State
from lamina.nn.registry import register_layer

_ARGS = """
    Args (PyTorch's):
        input_size, hidden_size: features in, and in each state.
        num_layers: stacked layers, each reading the one below.
        bias: the four biases per layer and direction.
        batch_first: input and output (B, T, F); False (PyTorch's default) is (T, B, F).
        dropout: in training, dropout on each layer's output but the last.
        bidirectional: a second direction over the reversed sequence per layer
            (`*_reverse` parameters); outputs are the two directions side by side.
        proj_size (LSTM only): if > 0, h is projected to this size by `weight_hr_l{k}`
            (proj_size, H) at every step (Sak et al., 2014); c keeps hidden_size.

    Args (lamina's):
        output: "tuple" returns (output, state) as PyTorch does; "sequence" returns the
            output alone (for use in a Sequential); "last" returns the last step (B, H).
        stateful: carry the final state into the next call; reset_state() and
            detach_state() control it (truncated BPTT uses both). A call with a batch of
            another size (an epoch's smaller last batch, sampling one sequence) starts
            from zeros: the carried state belongs to other sequences.

    The input may be a PackedSequence (nn.utils.rnn): each sequence then stops at its own
    length, its final state is its own last step, and the output is packed the same way.
    """


@register_layer("RNN")
class RNN(Recurrent):
    __doc__ = """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or
    relu. Returns (output (T, B, D * H), h_n (D * num_layers, B, H)), D = 2 if
    bidirectional.
    """ + _ARGS + """
    Examples:
        >>> rnn = nn.RNN(3, 5, num_layers=2)
        >>> out, h = rnn(lm.zeros(7, 4, 3))
        >>> out.shape, h.shape
        (lamina.Size([7, 4, 5]), lamina.Size([2, 4, 5]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: Literal["tanh", "relu"] = "tanh", bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 output: Output = "tuple", stateful: bool = False) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu'; got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, output, stateful)
        self.nonlinearity = nonlinearity

    def _step(self, xt: Tensor, state: State, W_hh: Tensor, b_hh: Any, W_hr: Any) -> State:
        pre = xt + F.linear(state[0], W_hh, b_hh)
        return (F.tanh(pre) if self.nonlinearity == "tanh" else F.relu(pre),)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "nonlinearity": self.nonlinearity}


@register_layer("LSTM")
class LSTM(Recurrent):
    __doc__ = """Long short-term memory, gates i, f, g, o stacked in weight_ih_l{k} (4H, F) as in
    PyTorch. Takes an optional state (h0, c0); returns (output, (h_n, c_n)).
    """ + _ARGS + """
    Examples:
        >>> lstm = nn.LSTM(3, 5, batch_first=True, bidirectional=True)
        >>> out, (h, c) = lstm(lm.zeros(4, 7, 3))
        >>> out.shape, h.shape
        (lamina.Size([4, 7, 10]), lamina.Size([2, 4, 5]))
    """

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, output: Output = "tuple",
                 stateful: bool = False) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, output, stateful)

    def _state_sizes(self) -> tuple[int, ...]:
        return (self.proj_size or self.hidden_size, self.hidden_size)

    def _direction(self, x: Tensor, state: State, suffix: str, mask: Any
                   ) -> tuple[Tensor, State]:
        W_ih, b_ih, W_hh, b_hh, W_hr = self._weights(suffix)
        if mask is not None or W_hr is not None:
            return super()._direction(x, state, suffix, mask)
        weights = (W_ih, W_hh) + (() if b_ih is None else (b_ih, b_hh))
        if not (is_grad_enabled() and any(t.requires_grad for t in (x, *state, *weights))):
            # Nothing to differentiate: the whole layer as one op, gates gate-major.
            seq, hT, cT = LSTMInference().apply(x, *state, *weights)
            return seq, (hT, cT)
        # The whole time loop is one fused op (F.lstm_sequence's), which activates the
        # x-gates in place: nothing else holds them. Both biases go in as one, which the
        # op adds in its step kernel: two passes over the (T, B, 4H) gates fewer.
        bias = () if b_ih is None else (b_ih + b_hh,)
        found = looked_up(x)
        if found is not None:  # x-gates looked up in the projected table, step by step
            ids, table = found
            args = (ids, F.linear(table, W_ih), *state, W_hh, *bias)
            seq, hT, cT = LSTMLookupSequence().apply(*args)
        else:
            args = (F.linear(x, W_ih), *state, W_hh, *bias)
            seq, hT, cT = LSTMSequence(scratch_gates=True).apply(*args)
        return seq, (hT, cT)

    def _step(self, xt: Tensor, state: State, W_hh: Tensor, b_hh: Any, W_hr: Any) -> State:
        h, c = F.lstm_cell(xt + F.linear(state[0], W_hh, b_hh), state[1])
        return (h if W_hr is None else F.linear(h, W_hr)), c

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "proj_size": self.proj_size}


@register_layer("GRU")
class GRU(Recurrent):
    __doc__ = """Gated recurrent unit, gates r, z, n stacked in weight_ih_l{k} (3H, F) as in
    PyTorch. Returns (output, h_n).
    """ + _ARGS + """
    Examples:
        >>> gru = nn.GRU(3, 5)
        >>> out, h = gru(lm.zeros(7, 3))
        >>> out.shape, h.shape
        (lamina.Size([7, 5]), lamina.Size([1, 5]))
    """

    gates = 3

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, output: Output = "tuple",
                 stateful: bool = False) -> None:
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, output, stateful)

    def _direction(self, x: Tensor, state: State, suffix: str, mask: Any
                   ) -> tuple[Tensor, State]:
        if mask is not None:
            return super()._direction(x, state, suffix, mask)
        W_ih, b_ih, W_hh, b_hh, _ = self._weights(suffix)
        # The whole time loop is one fused op (F.gru_sequence's).
        args = (input_projection(x, W_ih, b_ih), state[0], W_hh) + (() if b_hh is None else (b_hh,))
        seq, hT = GRUSequence().apply(*args)
        return seq, (hT,)

    def _step(self, xt: Tensor, state: State, W_hh: Tensor, b_hh: Any, W_hr: Any) -> State:
        return (F.gru_cell(xt, F.linear(state[0], W_hh, b_hh), state[0]),)
