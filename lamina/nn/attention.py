"""Multi-head attention as PyTorch's (query, key, value in; output and weights out), and
SelfAttention, its one-input form that fits in a Sequential or a config; and, from
attention_backends, what `torch.nn.attention` holds for choosing the kernel of
scaled_dot_product_attention."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.attention import attention_weights, typed_mask
from lamina.nn import init
from lamina.nn.attention_backends import SDPBackend, sdpa_kernel  # noqa: F401 - PyTorch's path
from lamina.nn.layer import Layer, Parameter
from lamina.nn.linear import NonDynamicallyQuantizableLinear
from lamina.nn.registry import register_layer


@register_layer("MultiheadAttention")
class MultiheadAttention(Layer):
    """Attention over `num_heads` heads of size embed_dim / num_heads (Vaswani et al., 2017),
    PyTorch's layer: `out, weights = attn(query, key, value)`.

    Args:
        embed_dim: size of each query's features, in and out.
        num_heads: heads; embed_dim must divide by it.
        dropout: in training, drop this share of the attention weights.
        bias: learn biases in the input and output projections.
        add_bias_kv: learn one more key and value (`bias_k`, `bias_v`), appended to every
            sequence's keys and values after their projection.
        add_zero_attn: append a key and a value of zeros to each head's.
        kdim, vdim: feature sizes of the keys and values (default embed_dim); when either
            differs, the projections are `q_proj_weight`, `k_proj_weight`, `v_proj_weight`.
        batch_first: input (B, T, E); False (PyTorch's default) takes (T, B, E).
        causal: lamina's: position i attends to positions 0..i only, without a mask.

    Parameters are PyTorch's: `in_proj_weight` (3E, E) holding the query, key and value
    projections stacked, `in_proj_bias` (3E,), and `out_proj.weight`, `out_proj.bias`; so
    a `torch.nn.MultiheadAttention` state dict loads as it is.

    Examples:
        >>> attn = nn.MultiheadAttention(64, 4, batch_first=True)
        >>> x = lm.zeros(8, 20, 64)
        >>> out, weights = attn(x, x, x)
        >>> out.shape, weights.shape
        ((8, 20, 64), (8, 20, 20))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 causal: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        if embed_dim < 1 or num_heads < 1 or embed_dim % num_heads:
            raise ValueError(f"{name}: embed_dim ({embed_dim}) must be a positive multiple of "
                             f"num_heads ({num_heads})")
        if not 0 <= dropout < 1:
            raise ValueError(f"{name}: dropout must be in [0, 1); got {dropout}")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.causal, self.batch_first = causal, batch_first
        self.head_dim = embed_dim // num_heads
        if self.kdim == embed_dim and self.vdim == embed_dim:
            self.in_proj_weight = Parameter(np.empty((3 * embed_dim, embed_dim), np.float32))
            init.xavier_uniform_(self.in_proj_weight)  # PyTorch's initialisation throughout
        else:
            self.in_proj_weight = None
            for part, dim in (("q", embed_dim), ("k", self.kdim), ("v", self.vdim)):
                weight = Parameter(np.empty((embed_dim, dim), np.float32))
                init.xavier_uniform_(weight)
                setattr(self, f"{part}_proj_weight", weight)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.bias_k = self.bias_v = None
        if add_bias_kv:
            self.bias_k = Parameter(np.empty((1, 1, embed_dim), np.float32))
            self.bias_v = Parameter(np.empty((1, 1, embed_dim), np.float32))
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)
        self.add_zero_attn = add_zero_attn
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None,
                key_padding_mask: Any = None, need_weights: bool = True, attn_mask: Any = None,
                average_attn_weights: bool = True, is_causal: bool = False
                ) -> tuple[Tensor, Tensor | None]:
        """Attend from `query` to `key` and `value`; returns (output, weights).

        The masks are PyTorch's: boolean True marks what may NOT be attended to (the
        opposite of F.scaled_dot_product_attention's), floating ones are added to the
        scores. `key_padding_mask` (B, S) marks each sequence's padding keys; `attn_mask`
        (L, S) or (B * num_heads, L, S) masks per query; `is_causal` is PyTorch's hint that
        attn_mask is the causal mask. A query left with no key gets zeros (PyTorch gives
        NaN). `weights` are the attention weights (after dropout, as PyTorch's), averaged
        over the heads to (B, L, S) or, with `average_attn_weights=False`, (B, heads, L, S);
        None when `need_weights` is False.
        """
        if key is None or value is None:
            raise TypeError(f"{type(self).__name__}.forward() takes query, key and value, as "
                            "PyTorch's, and returns (output, weights); for self-attention in "
                            "a Sequential or a config, use nn.SelfAttention")
        if is_causal and attn_mask is None:
            raise RuntimeError(f"{type(self).__name__}: is_causal is a hint that attn_mask is "
                               "the causal mask; pass attn_mask too (or build the layer with "
                               "causal=True)")
        unbatched = query.ndim == 2
        batch_axis = 0 if self.batch_first else 1
        if unbatched:  # (L, E): one sequence
            query, key, value = (t.unsqueeze(batch_axis) for t in (query, key, value))
            if isinstance(key_padding_mask, Tensor):  # an op, so a trace follows the mask
                key_padding_mask = key_padding_mask.unsqueeze(0)
            elif key_padding_mask is not None:
                key_padding_mask = np.asarray(key_padding_mask)[None]
        self._check(query, key, value)
        if not self.batch_first:  # (T, B, E) -> (B, T, E)
            query, key, value = (F.transpose(t, (1, 0, 2)) for t in (query, key, value))
        y, weights = self._attend(query, key, value, key_padding_mask, attn_mask, need_weights)
        if weights is not None and average_attn_weights:
            weights = F.mean(weights, axis=1)
        if not self.batch_first:
            y = F.transpose(y, (1, 0, 2))
        if unbatched:
            y = y.squeeze(batch_axis)
            weights = None if weights is None else weights.squeeze(0)
        return y, weights

    def _attend(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any,
                attn_mask: Any, need_weights: bool) -> tuple[Tensor, Tensor | None]:
        """Batch-first attention: (B, L, E) out, and the per-head weights (B, heads, L, S)."""
        allowed, bias = self._masks(key_padding_mask, attn_mask, query, key)
        q, k, v = self._project(query, key, value)
        if self.bias_k is not None:  # one learnt key and value more for every sequence
            k, v = (F.concat([t, F.broadcast_to(b, (t.shape[0], 1, self.embed_dim))], axis=1)
                    for t, b in ((k, self.bias_k), (v, self.bias_v)))
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        if self.add_zero_attn:  # and one of zeros for every head
            zeros = Tensor(np.zeros((*k.shape[:2], 1, self.head_dim), k.dtype))
            k, v = F.concat([k, zeros], axis=2), F.concat([v, zeros], axis=2)
        extra = (self.bias_k is not None) + self.add_zero_attn
        if extra:  # the appended keys are allowed, whatever the masks say of the others
            allowed, bias = (None if m is None else F.concat(
                [m, Tensor(np.full((*m.shape[:-1], extra), fill, m.dtype))], axis=-1)
                for m, fill in ((allowed, 1), (bias, 0)))
        weights = attention_weights(q, k, allowed, bias, self.causal, None)
        if self.training and self.dropout:
            weights = F.dropout(weights, self.dropout)
        y = F.matmul(weights, v)
        batch, length = y.shape[0], y.shape[2]
        y = F.reshape(F.transpose(y, (0, 2, 1, 3)), (batch, length, self.embed_dim))
        return self.out_proj(y), weights if need_weights else None

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
            raise ShapeError(f"{type(self).__name__}: expected {name} of shape "
                             f"{' or '.join(map(str, shapes))} for query "
                             f"{tuple(query.shape)} (batch first) and {self.num_heads} heads; "
                             f"got {tuple(mask.shape)}")
        return typed_mask(mask, query.dtype, f"{type(self).__name__}: {name} must be boolean "
                                             "(True where attention is not allowed, as in "
                                             "PyTorch)")

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        w, b, e = self.in_proj_weight, self.in_proj_bias, self.embed_dim
        biases = [None if b is None else b[i * e:(i + 1) * e] for i in range(3)]
        if w is None:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        elif key is query and value is query:  # self-attention: one GEMM for all three
            return F.split(F.linear(query, w, b), e, axis=-1)
        else:
            weights = [w[i * e:(i + 1) * e] for i in range(3)]
        return tuple(F.linear(t, weights[i], biases[i]) for i, t in enumerate((query, key, value)))

    def _heads(self, x: Tensor) -> Tensor:
        """(B, T, E) -> (B, heads, T, E / heads)."""
        batch, length, _ = x.shape
        heads = F.reshape(x, (batch, length, self.num_heads, self.head_dim))
        return F.transpose(heads, (0, 2, 1, 3))

    def _check(self, query: Any, key: Any, value: Any) -> None:
        layout = "(B, T, E)" if self.batch_first else "(T, B, E)"
        shapes = [tuple(getattr(t, "shape", ())) for t in (query, key, value)]
        batch_axis = 0 if self.batch_first else 1
        time_axis = 1 - batch_axis
        if (any(len(s) != 3 for s in shapes) or shapes[0][-1] != self.embed_dim
                or shapes[1][-1] != self.kdim or shapes[2][-1] != self.vdim
                or len({s[batch_axis] for s in shapes}) != 1
                or shapes[1][time_axis] != shapes[2][time_axis]):
            raise ShapeError(f"{type(self).__name__}: expected query, key and value {layout} "
                             f"with features embed_dim = {self.embed_dim}, kdim = {self.kdim} "
                             f"and vdim = {self.vdim}, one batch size, and keys and values of "
                             f"one length; got {', '.join(map(str, shapes))}")

    def extra_repr(self) -> str:
        return "causal=True" if self.causal else ""

    def get_config(self) -> dict[str, Any]:
        config = {"embed_dim": self.embed_dim, "num_heads": self.num_heads,
                  "dropout": self.dropout, "bias": self.in_proj_bias is not None}
        if self.kdim != self.embed_dim or self.vdim != self.embed_dim:
            config.update(kdim=self.kdim, vdim=self.vdim)
        if self.bias_k is not None or self.add_zero_attn:
            config.update(add_bias_kv=self.bias_k is not None, add_zero_attn=self.add_zero_attn)
        return {**config, "batch_first": self.batch_first, "causal": self.causal}


@register_layer("SelfAttention")
class SelfAttention(MultiheadAttention):
    """MultiheadAttention of a sequence over itself, returning the output only: the form
    that fits in a Sequential or a job file (`{type: SelfAttention, ...}`). Its
    arguments, parameters and state dict are MultiheadAttention's.

    Examples:
        >>> attn = nn.SelfAttention(64, 4, causal=True, batch_first=True)
        >>> attn(lm.zeros(8, 20, 64)).shape
        (8, 20, 64)
    """

    def forward(self, x: Tensor, key_padding_mask: Any = None,  # type: ignore[override]
                attn_mask: Any = None) -> Tensor:
        """`x` (T, B, E), or (B, T, E) when batch_first; the masks as MultiheadAttention's."""
        return super().forward(x, x, x, key_padding_mask, need_weights=False,
                               attn_mask=attn_mask)[0]

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if rest or len(shape) != 3 or shape[-1] == self.embed_dim or shape[-1] % self.num_heads:
            return None
        return f"embed_dim={shape[-1]}"
