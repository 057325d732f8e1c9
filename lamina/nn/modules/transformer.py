"""`lamina.nn.modules.transformer` (torch.nn.modules.transformer): the transformer layers,
under PyTorch's module path."""

from lamina.nn import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
