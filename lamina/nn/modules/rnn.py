"""`lamina.nn.modules.rnn` (torch.nn.modules.rnn): the recurrent layers and cells, under
PyTorch's module path."""

from lamina.nn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
