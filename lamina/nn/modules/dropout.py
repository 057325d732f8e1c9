"""`lamina.nn.modules.dropout` (torch.nn.modules.dropout): the dropouts, under PyTorch's module
path."""

from lamina.nn import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]
