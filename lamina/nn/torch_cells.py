"""More of ATen's top-level functions: the recurrent cells hand-written RNNs call
(`torch.lstm_cell`, `gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`), and
`constant_pad_nd`, `max_pool1d_with_indices`, `ctc_loss` (its reduction an int; left
out, none, as PyTorch's top-level function gives it) and `channel_shuffle`, each with
ATen's signature."""

from __future__ import annotations

from typing import Any

from lamina.nn import functional as F
from lamina.nn.torch_functions import _reduction


def _gates(x: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any) -> tuple[Any, Any]:
    return F.linear(x, w_ih, b_ih), F.linear(h, w_hh, b_hh)


def lstm_cell(input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,  # noqa: A002
              b_hh: Any = None) -> tuple[Any, Any]:
    """One LSTM step, ATen's: hx is (h, c); returns (h, c), gates i, f, g, o.

    Examples:
        >>> h, c = lm.lstm_cell(lm.ones(1, 2), (lm.zeros(1, 3), lm.zeros(1, 3)),
        ...                     lm.zeros(12, 2), lm.zeros(12, 3))
        >>> h
        tensor([[0., 0., 0.]])
    """
    gx, gh = _gates(input, hx[0], w_ih, w_hh, b_ih, b_hh)
    return F.lstm_cell(gx + gh, hx[1])


def gru_cell(input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,  # noqa: A002
             b_hh: Any = None) -> Any:
    """One GRU step, ATen's; gates r, z, n.

    Examples:
        >>> lm.gru_cell(lm.ones(1, 2), lm.ones(1, 3), lm.zeros(9, 2), lm.zeros(9, 3))
        tensor([[0.5000, 0.5000, 0.5000]])
    """
    gx, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return F.gru_cell(gx, gh, hx)


def rnn_tanh_cell(input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,  # noqa: A002
                  b_hh: Any = None) -> Any:
    """tanh(x W_ih^T + b_ih + h W_hh^T + b_hh), ATen's.

    Examples:
        >>> lm.rnn_tanh_cell(lm.ones(1, 2), lm.zeros(1, 3), lm.zeros(3, 2), lm.zeros(3, 3))
        tensor([[0., 0., 0.]])
    """
    gx, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return F.tanh(gx + gh)


def rnn_relu_cell(input: Any, hx: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,  # noqa: A002
                  b_hh: Any = None) -> Any:
    """relu(x W_ih^T + b_ih + h W_hh^T + b_hh), ATen's.

    Examples:
        >>> lm.rnn_relu_cell(lm.ones(1, 2), lm.zeros(1, 3), lm.ones(3, 2), lm.zeros(3, 3))
        tensor([[2., 2., 2.]])
    """
    gx, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return F.relu(gx + gh)


def constant_pad_nd(input: Any, pad: Any, value: float = 0) -> Any:  # noqa: A002
    """F.pad in constant mode, ATen's name.

    Examples:
        >>> lm.constant_pad_nd(lm.ones(2), (1, 0), 5.0)
        tensor([5., 1., 1.])
    """
    return F.pad(input, tuple(pad), mode="constant", value=value)


def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = (),  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
                            ) -> tuple[Any, Any]:
    """(values, indices) of F.max_pool1d, ATen's (an empty stride is the kernel's).

    Examples:
        >>> lm.max_pool1d_with_indices(lm.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        (tensor([[[3., 2.]]]), tensor([[[1, 2]]]))
    """
    return F.max_pool1d(input, kernel_size, stride if stride not in ((), []) else None,
                        padding, dilation, ceil_mode, return_indices=True)


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 0, zero_infinity: bool = False) -> Any:
    """F.ctc_loss with ATen's int reduction (0 none, 1 mean, 2 sum); left out, each
    sample's loss, as PyTorch's top-level function gives them.

    Examples:
        >>> lp = lm.log_softmax(lm.zeros(3, 1, 2), 2)
        >>> lm.ctc_loss(lp, lm.tensor([[1]]), [3], [1])
        tensor([0.2877])
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=blank,
                      reduction=_reduction(reduction), zero_infinity=zero_infinity)


def channel_shuffle(input: Any, groups: int) -> Any:  # noqa: A002
    """F.channel_shuffle, ATen's name (and `native_channel_shuffle`).

    Examples:
        >>> lm.channel_shuffle(lm.arange(4.0).reshape(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    return F.channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle

__all__ = ["channel_shuffle", "constant_pad_nd", "ctc_loss", "gru_cell", "lstm_cell",
           "max_pool1d_with_indices", "native_channel_shuffle", "rnn_relu_cell",
           "rnn_tanh_cell"]
