"""`lamina.nn.modules.channelshuffle` (torch.nn.modules.channelshuffle): ChannelShuffle, under
PyTorch's module path."""

from lamina.nn import (
    ChannelShuffle,
)

__all__ = ["ChannelShuffle"]
