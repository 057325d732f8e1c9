"""PyTorch's nn.Transformer: an encoder stack and a decoder stack, each with a final layer
norm, and the square causal mask its users build for the decoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.dtypes import get_default_dtype
from lamina.errors import ShapeError
from lamina.nn import init
from lamina.nn.layer import Layer
from lamina.nn.normalization import LayerNorm
from lamina.nn.registry import register_layer
from lamina.nn.transformer import (
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)


@register_layer("Transformer")
class Transformer(Layer):
    """The encoder-decoder transformer of Vaswani et al. (2017), PyTorch's layer with its
    arguments, defaults, parameter names (`encoder.layers.0.self_attn.in_proj_weight`,
    `decoder.norm.weight`, ...) and initialisation (Xavier-uniform for every matrix).

    `custom_encoder` and `custom_decoder` replace the stacks, as in PyTorch (a config
    cannot hold them).

    Examples:
        >>> model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2,
        ...                        num_decoder_layers=2, dim_feedforward=64, batch_first=True)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(5)
        >>> model(lm.zeros(2, 7, 32), lm.zeros(2, 5, 32), tgt_mask=mask).shape
        (2, 5, 32)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu",
                 custom_encoder: Layer | None = None, custom_decoder: Layer | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        block = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                     layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                     norm_first=norm_first, bias=bias)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **block), num_encoder_layers,
            LayerNorm(d_model, layer_norm_eps, bias=bias))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **block), num_decoder_layers,
            LayerNorm(d_model, layer_norm_eps, bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._custom = custom_encoder is not None or custom_decoder is not None
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode `src`, then decode `tgt` attending to it; the masks are
        TransformerEncoder's (`src_*`) and TransformerDecoder's (`tgt_*`, `memory_*`)."""
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and (src.ndim != tgt.ndim or src.shape[batch] != tgt.shape[batch]):
            raise RuntimeError(f"Transformer: the batch number of src and tgt must be equal; "
                               f"got src {tuple(src.shape)} and tgt {tuple(tgt.shape)} "
                               f"(batch_first={self.batch_first})")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(f"Transformer: the feature number of src and tgt must be equal to "
                             f"d_model = {self.d_model}; got src {tuple(src.shape)} and tgt "
                             f"{tuple(tgt.shape)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None
                                        ) -> Tensor:
        """(sz, sz): 0 where position i may attend to j (j <= i), -inf above the diagonal."""
        mask = np.triu(np.full((sz, sz), -np.inf), 1)
        return Tensor(mask.astype(np.dtype(dtype) if dtype is not None else get_default_dtype()))

    def extra_repr(self) -> str:
        return ""  # as PyTorch's: the children say it all

    def get_config(self) -> dict[str, Any]:
        if self._custom:
            raise ValueError("Transformer: a custom encoder or decoder cannot be written to a "
                             "config")
        first = self.encoder.layers[0].get_config()
        del first["causal"]
        return {"d_model": self.d_model, "nhead": self.nhead,
                "num_encoder_layers": self.encoder.num_layers,
                "num_decoder_layers": self.decoder.num_layers, **first}
