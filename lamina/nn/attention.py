"""Multi-head attention with PyTorch's parameters, usable as self-attention in a Sequential."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.attention import attend, typed_mask
from lamina.nn import init
from lamina.nn.dropout import Dropout
from lamina.nn.layer import Layer, Parameter
from lamina.nn.linear import Linear
from lamina.nn.normalization import LayerNorm
from lamina.nn.registry import register_layer


@register_layer("MultiheadAttention")
class MultiheadAttention(Layer):
    """Attention over `num_heads` heads of size embed_dim / num_heads (Vaswani et al., 2017).

    `layer(x)` is self-attention, so the layer fits in a Sequential; `layer(query, key,
    value)` attends from the queries to other keys and values. Returns the output only
    (PyTorch's `need_weights=False`).

    Args:
        embed_dim: size of each position's features, in and out.
        num_heads: heads; embed_dim must divide by it.
        dropout: in training, drop this share of the attention weights.
        bias: learn biases in the input and output projections.
        causal: position i attends to positions 0..i only (a decoder, or a language model).
        batch_first: input (B, T, E); False (PyTorch's default) takes (T, B, E).

    Parameters are PyTorch's: `in_proj_weight` (3E, E) holding the query, key and value
    projections stacked, `in_proj_bias` (3E,), and `out_proj.weight`, `out_proj.bias`; so
    a `torch.nn.MultiheadAttention` state dict loads as it is.

    Example:
        >>> attn = nn.MultiheadAttention(64, 4, causal=True, batch_first=True)
        >>> attn(lm.tensor(np.zeros((8, 20, 64), np.float32))).shape
        (8, 20, 64)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 causal: bool = False, batch_first: bool = False) -> None:
        super().__init__()
        if embed_dim < 1 or num_heads < 1 or embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be a positive "
                             f"multiple of num_heads ({num_heads})")
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1); got {dropout}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.causal, self.batch_first = causal, batch_first
        self.in_proj_weight = Parameter(np.empty((3 * embed_dim, embed_dim), np.float32))
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias)
        init.xavier_uniform_(self.in_proj_weight)  # PyTorch's initialisation throughout
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                key_padding_mask: Any = None, attn_mask: Any = None) -> Tensor:
        """Attend from `query` to `key` and `value` (both default to the query).

        The masks are PyTorch's: boolean True marks what may NOT be attended to (the
        opposite of F.scaled_dot_product_attention's), floating ones are added to the
        scores. `key_padding_mask` (B, S) marks each sequence's padding keys;
        `attn_mask` (L, S) or (B * num_heads, L, S) masks per query. A query left with no
        key gets zeros. Both combine with `causal`.
        """
        key = query if key is None else key
        value = key if value is None else value
        self._check(query, key, value)
        if not self.batch_first:  # (T, B, E) -> (B, T, E)
            query, key, value = (F.transpose(t, (1, 0, 2)) for t in (query, key, value))
        allowed, bias = self._masks(key_padding_mask, attn_mask, query, key)
        q, k, v = (self._heads(p) for p in self._project(query, key, value))
        y = attend(q, k, v, allowed, bias, self.causal, None,
                   self.dropout if self.training else 0.0)
        batch, length = y.shape[0], y.shape[2]
        y = F.reshape(F.transpose(y, (0, 2, 1, 3)), (batch, length, self.embed_dim))
        y = self.out_proj(y)
        return y if self.batch_first else F.transpose(y, (1, 0, 2))

    def _masks(self, key_padding_mask: Any, attn_mask: Any, query: Tensor, key: Tensor
               ) -> tuple[Tensor | None, Tensor | None]:
        """PyTorch's two masks as one 0/1 `allowed` and one additive `bias`, each shaped to
        broadcast over (B, heads, L, S) and either None."""
        (batch, length, _), keys = query.shape, key.shape[1]
        padding = self._mask("key_padding_mask", key_padding_mask, [(batch, keys)], query)
        per_query = self._mask("attn_mask", attn_mask, [
            (length, keys), (batch * self.num_heads, length, keys)], query)
        pieces = []
        if padding is not None:
            pieces.append((padding, (batch, 1, 1, keys)))
        if per_query is not None:
            pieces.append((per_query, per_query.shape if per_query.ndim == 2
                           else (batch, self.num_heads, length, keys)))
        allowed: Tensor | None = None
        bias: Tensor | None = None
        for mask, shape in pieces:
            if mask.dtype == bool:  # True: not allowed
                ok = 1.0 - F.reshape(F.astype(mask, query.dtype), shape)
                allowed = ok if allowed is None else allowed * ok
            else:
                add = F.reshape(mask, shape)
                bias = add if bias is None else bias + add
        return allowed, bias

    def _mask(self, name: str, mask: Any, shapes: list[tuple[int, ...]], query: Tensor
              ) -> Tensor | None:
        """The mask as a Tensor, boolean or in the query's dtype, of one of `shapes`."""
        if mask is None:
            return None
        mask = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
        if mask.shape not in shapes:
            raise ShapeError(f"MultiheadAttention: expected {name} of shape "
                             f"{' or '.join(map(str, shapes))} for query {query.shape} (batch "
                             f"first) and {self.num_heads} heads; got {mask.shape}")
        return typed_mask(mask, query.dtype, f"MultiheadAttention: {name} must be boolean "
                                             "(True where attention is not allowed, as in "
                                             "PyTorch)")

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        w, b, e = self.in_proj_weight, self.in_proj_bias, self.embed_dim
        if key is query and value is query:  # self-attention: one GEMM for all three
            return F.split(F.linear(query, w, b), e, axis=-1)
        return tuple(F.linear(t, w[i * e:(i + 1) * e], None if b is None else b[i * e:(i + 1) * e])
                     for i, t in enumerate((query, key, value)))

    def _heads(self, x: Tensor) -> Tensor:
        """(B, T, E) -> (B, heads, T, E / heads)."""
        batch, length, _ = x.shape
        heads = F.reshape(x, (batch, length, self.num_heads, self.embed_dim // self.num_heads))
        return F.transpose(heads, (0, 2, 1, 3))

    def _check(self, query: Any, key: Any, value: Any) -> None:
        layout = "(B, T, E)" if self.batch_first else "(T, B, E)"
        shapes = [getattr(t, "shape", ()) for t in (query, key, value)]
        batch_axis = 0 if self.batch_first else 1
        if (any(len(s) != 3 or s[-1] != self.embed_dim for s in shapes)
                or len({s[batch_axis] for s in shapes}) != 1 or shapes[1] != shapes[2]):
            raise ShapeError(f"MultiheadAttention: expected query, key and value {layout} "
                             f"with E = embed_dim = {self.embed_dim}, one batch size, and keys "
                             f"and values of one length; got {', '.join(map(str, shapes))}")

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if rest or len(shape) != 3 or shape[-1] == self.embed_dim or shape[-1] % self.num_heads:
            return None
        return f"embed_dim={shape[-1]}"

    def get_config(self) -> dict[str, Any]:
        return {"embed_dim": self.embed_dim, "num_heads": self.num_heads,
                "dropout": self.dropout, "bias": self.in_proj_bias is not None,
                "causal": self.causal,
                "batch_first": self.batch_first}


@register_layer("PositionalEncoding")
class PositionalEncoding(Layer):
    """Adds each position's vector to the features there, so attention (which treats its
    input as a set) can tell positions apart: the fixed sinusoids of Vaswani et al. (2017),
    or a learned table (`learned: true`, as GPT-2).

    Args:
        embedding_dim: size of each position's features.
        max_len: the longest sequence it takes.
        learned: learn `weight` (max_len, embedding_dim), drawn from N(0, 0.02^2), instead
            of the sinusoids (which are not saved: they are the same for every model).
        batch_first: input (B, T, E); False (the default, as PyTorch's) takes (T, B, E).

    Example:
        >>> pos = nn.PositionalEncoding(64, max_len=128, batch_first=True)
        >>> pos(lm.tensor(np.zeros((8, 20, 64), np.float32))).shape
        (8, 20, 64)
    """

    def __init__(self, embedding_dim: int, max_len: int = 512, learned: bool = False,
                 batch_first: bool = False) -> None:
        super().__init__()
        if embedding_dim < 1 or max_len < 1:
            raise ValueError(f"PositionalEncoding: embedding_dim and max_len must be >= 1; got "
                             f"{embedding_dim} and {max_len}")
        self.embedding_dim, self.max_len = embedding_dim, max_len
        self.learned, self.batch_first = learned, batch_first
        table = np.zeros((max_len, embedding_dim), np.float32)
        if learned:
            self.weight = Parameter(table)
            init.normal_(self.weight, 0.0, 0.02)
        else:
            self.table = sinusoids(max_len, embedding_dim)

    def forward(self, x: Tensor) -> Tensor:
        time = 1 if self.batch_first else 0
        if x.ndim != 3 or x.shape[-1] != self.embedding_dim or x.shape[time] > self.max_len:
            layout = "(B, T, E)" if self.batch_first else "(T, B, E)"
            raise ShapeError(f"PositionalEncoding: expected input {layout} with E = "
                             f"{self.embedding_dim} and T <= max_len = {self.max_len}; got "
                             f"{x.shape}")
        length = x.shape[time]
        table = self.weight[:length] if self.learned else self.table[:length]
        if not self.batch_first:  # (T, E) -> (T, 1, E), to broadcast over the batch
            table = (F.reshape(table, (length, 1, self.embedding_dim)) if self.learned
                     else table[:, None])
        return x + table

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) != 3:
            return None
        if shape[-1] != self.embedding_dim:
            return f"embedding_dim={shape[-1]}"
        length = shape[1 if self.batch_first else 0]
        return f"max_len={length}" if length > self.max_len else None

    def get_config(self) -> dict[str, Any]:
        return {"embedding_dim": self.embedding_dim, "max_len": self.max_len,
                "learned": self.learned, "batch_first": self.batch_first}


def sinusoids(length: int, dim: int) -> np.ndarray:
    """(length, dim): sin(pos / 10000^(2i/dim)) in even columns, cos in odd ones."""
    pos = np.arange(length, dtype=np.float64)[:, None]
    rates = np.exp(np.arange(0, dim, 2) * (-np.log(10000.0) / dim))
    table = np.zeros((length, dim))
    table[:, 0::2] = np.sin(pos * rates)
    table[:, 1::2] = np.cos(pos * rates[:dim // 2])
    return table.astype(np.float32)


@register_layer("TransformerEncoderLayer")
class TransformerEncoderLayer(Layer):
    """Self-attention and a feed-forward layer, each with a residual connection and layer
    norm: PyTorch's TransformerEncoderLayer, with its arguments, semantics and parameter
    names (`self_attn.in_proj_weight`, `linear1.weight`, `norm1.weight`, ...), so its
    state dict loads as it is.

    Args:
        d_model: size of each position's features.
        nhead: attention heads.
        dim_feedforward: width of the feed-forward layer.
        dropout: in training, on the attention weights and after each sub-layer.
        activation: "relu" or "gelu".
        layer_norm_eps: the norms' eps.
        batch_first: input (B, T, E); False (the default, as PyTorch's) takes (T, B, E).
        norm_first: normalise before each sub-layer (pre-norm, as most trained today)
            instead of after (the original post-norm, PyTorch's default).
        bias: biases in the linear layers and the norms.
        causal: position i attends to positions 0..i only.

    Example:
        >>> block = nn.TransformerEncoderLayer(64, 4, 256, norm_first=True, causal=True,
        ...                                    batch_first=True)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Literal["relu", "gelu"] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, causal: bool = False) -> None:
        super().__init__()
        if activation not in ("relu", "gelu"):
            raise ValueError(f"TransformerEncoderLayer: activation must be 'relu' or 'gelu'; "
                             f"got {activation!r}")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, causal, batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias)
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation, self.norm_first = activation, norm_first

    def forward(self, x: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None
                ) -> Tensor:
        """`src_mask` and `src_key_padding_mask` are MultiheadAttention's `attn_mask` and
        `key_padding_mask` (PyTorch's names and conventions: True is masked out)."""
        def attn(h: Tensor) -> Tensor:
            return self.self_attn(h, key_padding_mask=src_key_padding_mask,
                                  attn_mask=src_mask)

        if self.norm_first:
            x = x + self.dropout1(attn(self.norm1(x)))
            return x + self.dropout2(self._feed_forward(self.norm2(x)))
        x = self.norm1(x + self.dropout1(attn(x)))
        return self.norm2(x + self.dropout2(self._feed_forward(x)))

    def _feed_forward(self, x: Tensor) -> Tensor:
        h = self.linear1(x)
        h = F.relu(h) if self.activation == "relu" else F.gelu(h)
        return self.linear2(self.dropout(h))

    def get_config(self) -> dict[str, Any]:
        attn = self.self_attn
        return {"d_model": attn.embed_dim, "nhead": attn.num_heads,
                "dim_feedforward": self.linear1.out_features, "dropout": attn.dropout,
                "activation": self.activation, "layer_norm_eps": self.norm1.eps,
                "batch_first": attn.batch_first, "norm_first": self.norm_first,
                "bias": self.linear1.bias is not None, "causal": attn.causal}
