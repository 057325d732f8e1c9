"""PyTorch's transformer family: encoder and decoder layers, their stacks, and Transformer,
with PyTorch's arguments, mask conventions and parameter names, so state dicts load as
they are."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.attention import MultiheadAttention
from lamina.nn.container import ModuleList
from lamina.nn.dropout import Dropout
from lamina.nn.layer import Layer
from lamina.nn.linear import Linear
from lamina.nn.normalization import LayerNorm
from lamina.nn.registry import ConfigError, from_config, register_layer

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class _Block(Layer):
    """What the encoder and decoder layers share: the feed-forward sub-layer and its
    activation (a name, or any callable as in PyTorch)."""

    def _feed_forward_init(self, d_model: int, dim_feedforward: int, dropout: float,
                           activation: str | Callable[[Tensor], Tensor], bias: bool) -> None:
        if isinstance(activation, str) and activation not in _ACTIVATIONS:
            raise ValueError(f"{type(self).__name__}: activation must be 'relu', 'gelu' or a "
                             f"callable; got {activation!r}")
        self.linear1 = Linear(d_model, dim_feedforward, bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias)
        self.activation = activation

    def extra_repr(self) -> str:
        return ""  # as PyTorch's: the children say it all

    def _feed_forward(self, x: Tensor) -> Tensor:
        act = self.activation
        h = (_ACTIVATIONS[act] if isinstance(act, str) else act)(self.linear1(x))
        return self.linear2(self.dropout(h))

    def _activation_name(self) -> str:
        for name, fn in _ACTIVATIONS.items():
            if self.activation in (name, fn):
                return name
        raise ConfigError(f"{type(self).__name__}: activation {self.activation!r} is a "
                          "callable, which a config cannot hold; use 'relu' or 'gelu'")

    def _block_config(self) -> dict[str, Any]:
        attn: MultiheadAttention = self.self_attn  # type: ignore[assignment]
        return {"d_model": attn.embed_dim, "nhead": attn.num_heads,
                "dim_feedforward": self.linear1.out_features, "dropout": attn.dropout,
                "activation": self._activation_name(), "layer_norm_eps": self.norm1.eps,
                "batch_first": attn.batch_first, "norm_first": self.norm_first,
                "bias": self.linear1.bias is not None}


def _attend(attn: MultiheadAttention, x: Tensor, memory: Tensor, mask: Any, padding: Any
            ) -> Tensor:
    return attn(x, memory, memory, key_padding_mask=padding, attn_mask=mask,
                need_weights=False)[0]


@register_layer("TransformerEncoderLayer")
class TransformerEncoderLayer(_Block):
    """Self-attention and a feed-forward layer, each with a residual connection and layer
    norm: PyTorch's TransformerEncoderLayer (`self_attn.in_proj_weight`, `linear1.weight`,
    `norm1.weight`, ...).

    Args:
        d_model: size of each position's features.
        nhead: attention heads.
        dim_feedforward: width of the feed-forward layer.
        dropout: in training, on the attention weights and after each sub-layer.
        activation: "relu", "gelu", or a callable (which a config cannot hold).
        layer_norm_eps: the norms' eps.
        batch_first: input (B, T, E); False (the default, as PyTorch's) takes (T, B, E).
        norm_first: normalise before each sub-layer (pre-norm, as most trained today)
            instead of after (the original post-norm, PyTorch's default).
        bias: biases in the linear layers and the norms.
        causal: lamina's: position i attends to positions 0..i only, without a mask.

    Examples:
        >>> block = nn.TransformerEncoderLayer(64, 4, 256, norm_first=True, causal=True,
        ...                                    batch_first=True)
        >>> block(lm.zeros(8, 20, 64)).shape
        (8, 20, 64)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 causal: bool = False) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias,
                                            batch_first=batch_first, causal=causal)
        self._feed_forward_init(d_model, dim_feedforward, dropout, activation, bias)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        """`src_mask` and `src_key_padding_mask` are MultiheadAttention's `attn_mask` and
        `key_padding_mask` (PyTorch's conventions: True is masked out); `is_causal` is
        PyTorch's hint that src_mask is the causal mask."""
        def attn(h: Tensor) -> Tensor:
            return self.dropout1(_attend(self.self_attn, h, h, src_mask, src_key_padding_mask))

        x = src
        if self.norm_first:
            x = x + attn(self.norm1(x))
            return x + self.dropout2(self._feed_forward(self.norm2(x)))
        x = self.norm1(x + attn(x))
        return self.norm2(x + self.dropout2(self._feed_forward(x)))

    def get_config(self) -> dict[str, Any]:
        return {**self._block_config(), "causal": self.self_attn.causal}


@register_layer("TransformerDecoderLayer")
class TransformerDecoderLayer(_Block):
    """Self-attention over the target, attention to the encoder's output (`memory`), and a
    feed-forward layer, each with a residual connection and layer norm: PyTorch's
    TransformerDecoderLayer, with its arguments and parameter names (`self_attn`,
    `multihead_attn`, `linear1`, `norm1`..`norm3`).

    Examples:
        >>> layer = nn.TransformerDecoderLayer(32, 4, 64, batch_first=True)
        >>> layer(lm.zeros(2, 5, 32), lm.zeros(2, 7, 32)).shape
        (2, 5, 32)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias,
                                            batch_first=batch_first)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout, bias,
                                                 batch_first=batch_first)
        self._feed_forward_init(d_model, dim_feedforward, dropout, activation, bias)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """The masks are MultiheadAttention's (True is masked out): `tgt_mask` (T, T) and
        `tgt_key_padding_mask` (B, T) for the self-attention, `memory_mask` (T, S) and
        `memory_key_padding_mask` (B, S) for the attention to memory."""
        def self_block(h: Tensor) -> Tensor:
            return self.dropout1(_attend(self.self_attn, h, h, tgt_mask, tgt_key_padding_mask))

        def memory_block(h: Tensor) -> Tensor:
            return self.dropout2(_attend(self.multihead_attn, h, memory, memory_mask,
                                         memory_key_padding_mask))

        x = tgt
        if self.norm_first:
            x = x + self_block(self.norm1(x))
            x = x + memory_block(self.norm2(x))
            return x + self.dropout3(self._feed_forward(self.norm3(x)))
        x = self.norm1(x + self_block(x))
        x = self.norm2(x + memory_block(x))
        return self.norm3(x + self.dropout3(self._feed_forward(x)))

    def get_config(self) -> dict[str, Any]:
        return self._block_config()


class _Stack(Layer):
    """`num_layers` copies of one layer, in `layers`, and an optional final `norm`."""

    def __init__(self, layer: Layer, num_layers: int, norm: Layer | None) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"{type(self).__name__}: num_layers must be >= 1; got {num_layers}")
        self.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def extra_repr(self) -> str:
        return ""  # as PyTorch's

    def _finish(self, x: Tensor) -> Tensor:
        return x if self.norm is None else self.norm(x)

    def _stack_config(self, key: str) -> dict[str, Any]:
        return {key: self.layers[0].to_config(), "num_layers": self.num_layers,
                "norm": None if self.norm is None else self.norm.to_config()}

    @classmethod
    def _from_args(cls, args: Mapping[str, Any], path: str, key: str) -> Any:
        unknown = set(args) - {key, "num_layers", "norm"}
        if unknown or key not in args or "num_layers" not in args:
            raise ConfigError(f"{path}: {cls.__name__} takes {key}, num_layers and norm; got "
                              f"{sorted(args)}")
        norm = args.get("norm")
        return cls(from_config(args[key], f"{path}.{key}"), args["num_layers"],
                   None if norm is None else from_config(norm, f"{path}.norm"))


@register_layer("TransformerEncoder")
class TransformerEncoder(_Stack):
    """`num_layers` copies of `encoder_layer`, then `norm` if given: PyTorch's
    TransformerEncoder (`enable_nested_tensor` and `mask_check` accepted; they only
    select PyTorch's fast paths).

    Examples:
        >>> layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        >>> nn.TransformerEncoder(layer, num_layers=2)(lm.zeros(2, 5, 32)).shape
        (2, 5, 32)
    """

    def __init__(self, encoder_layer: Layer, num_layers: int, norm: Layer | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self._finish(x)

    def get_config(self) -> dict[str, Any]:
        return self._stack_config("encoder_layer")

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> TransformerEncoder:
        return cls._from_args(args, path, "encoder_layer")


@register_layer("TransformerDecoder")
class TransformerDecoder(_Stack):
    """`num_layers` copies of `decoder_layer`, then `norm` if given: PyTorch's
    TransformerDecoder; `forward(tgt, memory, ...)` takes TransformerDecoderLayer's masks.
    """

    def __init__(self, decoder_layer: Layer, num_layers: int, norm: Layer | None = None
                 ) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask)
        return self._finish(x)

    def get_config(self) -> dict[str, Any]:
        return self._stack_config("decoder_layer")

    @classmethod
    def from_config_args(cls, args: Mapping[str, Any], path: str) -> TransformerDecoder:
        return cls._from_args(args, path, "decoder_layer")
