"""Attention masks: MultiheadAttention's and TransformerEncoderLayer's against PyTorch, a
padded batch against each sequence alone, masks made from the batch inside a plan, and
the errors a user meets. F.scaled_dot_product_attention's masks are op cases."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn

B, L, S, E, H = 2, 3, 5, 4, 2
PADDING = np.array([[False, False, False, True, True], [False, False, False, False, True]])


def _rng(seed=0):
    return np.random.default_rng(seed)


MASKS = {  # name -> (key_padding_mask, attn_mask), PyTorch's convention: True is masked out
    "padding": (PADDING, None),
    "per query": (None, _rng(1).random((L, S)) < 0.3),
    "per head": (PADDING, _rng(2).random((B * H, L, S)) < 0.3),
    "float": (_rng(3).standard_normal((B, S)), _rng(4).standard_normal((B * H, L, S))),
    "mixed": (PADDING, _rng(5).standard_normal((L, S))),
}


@pytest.mark.parametrize("extra", [{}, {"add_bias_kv": True}, {"add_zero_attn": True},
                                   {"add_bias_kv": True, "add_zero_attn": True}],
                         ids=["", "bias_kv", "zero_attn", "both"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("name", list(MASKS))
def test_masked_attention_matches_pytorch(name, batch_first, extra) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, **extra).double()
    ours = nn.MultiheadAttention(E, H, batch_first=batch_first, **extra).to("float64")
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    q, kv = _rng(6).standard_normal((B, L, E)), _rng(7).standard_normal((B, S, E))
    if not batch_first:
        q, kv = q.transpose(1, 0, 2).copy(), kv.transpose(1, 0, 2).copy()
    padding, per_query = MASKS[name]
    tq, tkv = torch.tensor(q, requires_grad=True), torch.tensor(kv, requires_grad=True)
    theirs_padding = None if padding is None else torch.tensor(padding)
    if name == "mixed":  # PyTorch deprecates masks of two kinds; lamina takes them
        theirs_padding = torch.zeros(B, S, dtype=torch.float64).masked_fill(theirs_padding,
                                                                            float("-inf"))
    ty, tw = theirs(tq, tkv, tkv, key_padding_mask=theirs_padding,
                    attn_mask=None if per_query is None else torch.tensor(per_query),
                    average_attn_weights=False)
    lq, lkv = lm.tensor(q, requires_grad=True), lm.tensor(kv, requires_grad=True)
    ly, lw = ours(lq, lkv, lkv, key_padding_mask=padding, attn_mask=per_query,
                  average_attn_weights=False)
    g, gw = _rng(8).standard_normal(ly.shape), _rng(9).standard_normal(lw.shape)
    (ty * torch.tensor(g)).sum().add((tw * torch.tensor(gw)).sum()).backward()
    ((ly * g).sum() + (lw * gw).sum()).backward()
    np.testing.assert_allclose(ly.array, ty.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(lw.array, tw.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(lq.grad, tq.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(lkv.grad, tkv.grad.numpy(), atol=1e-12)
    for (n, p), t in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), atol=1e-12, err_msg=n)
    np.testing.assert_allclose(ours.in_proj_weight.grad, theirs.in_proj_weight.grad.numpy(),
                               atol=1e-12)


@pytest.mark.parametrize("norm_first", [True, False])
def test_an_encoder_layer_with_padding_matches_pytorch(norm_first) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(E, H, 8, dropout=0.0, batch_first=True,
                                              norm_first=norm_first).double().eval()
    ours = nn.TransformerEncoderLayer(E, H, 8, norm_first=norm_first, batch_first=True).to("float64").eval()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = _rng(9).standard_normal((B, S, E))
    causal = np.triu(np.ones((S, S), bool), 1)
    tx, lx = torch.tensor(x, requires_grad=True), lm.tensor(x, requires_grad=True)
    ty = theirs(tx, src_mask=torch.tensor(causal), src_key_padding_mask=torch.tensor(PADDING))
    ly = ours(lx, src_mask=causal, src_key_padding_mask=PADDING)
    ty.sum().backward()
    ly.sum().backward()
    np.testing.assert_allclose(ly.array, ty.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(lx.grad, tx.grad.numpy(), atol=1e-12)


def test_a_padded_batch_gives_each_sequence_what_it_gives_alone() -> None:
    lm.manual_seed(0)
    attn = nn.SelfAttention(E, H, causal=True, batch_first=True).to("float64")
    lengths = [3, 5, 1]
    x = _rng(10).standard_normal((3, 5, E))
    padding = np.arange(5)[None] >= np.array(lengths)[:, None]
    x[padding] = 1e3  # whatever the padding holds must not matter
    batched = attn(lm.tensor(x), key_padding_mask=padding).array
    for i, n in enumerate(lengths):
        alone = attn(lm.tensor(x[i:i + 1, :n])).array
        np.testing.assert_allclose(batched[i, :n], alone[0], rtol=1e-12, atol=1e-12)


def test_a_query_with_no_key_left_gets_zeros_and_passes_no_gradient() -> None:
    attn = nn.SelfAttention(E, H, bias=False, batch_first=True).to("float64")
    x = lm.tensor(_rng(11).standard_normal((B, S, E)), requires_grad=True)
    everything = np.ones((B, S), bool)
    everything[0] = False  # the first sequence keeps its keys
    y = attn(x, key_padding_mask=everything)
    np.testing.assert_array_equal(y.array[1], 0.0)
    y.sum().backward()
    assert np.isfinite(x.grad).all() and np.isfinite(attn.in_proj_weight.grad).all()
    np.testing.assert_array_equal(x.grad[1], 0.0)
    assert np.abs(x.grad[0]).sum() > 0


class PaddedClassifier(nn.Layer):
    """Token ids, 0 for padding, masked from the ids inside forward."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(7, E)
        self.attn = nn.SelfAttention(E, H, batch_first=True)
        self.head = nn.Linear(E, 3)

    def forward(self, ids):
        h = self.attn(self.embed(ids), key_padding_mask=ids == 0)
        return self.head(F.mean(h, axis=1))


def test_a_mask_made_from_the_ids_follows_every_batch_in_a_plan() -> None:
    lm.manual_seed(0)
    model = PaddedClassifier()
    ids = lm.tensor(np.array([[1, 2, 3, 0, 0], [4, 5, 6, 6, 0]]))
    y = lm.tensor(np.array([0, 2]))
    plan = lm.plan.compile(model, F.cross_entropy, (ids, y))
    for seed in range(3):
        other = lm.tensor(_rng(seed).integers(0, 7, (2, 5)))
        other.array[:, -2:] = 0
        other.array[1, :] = 0 if seed == 2 else other.array[1, :]  # a sequence of padding only
        model.zero_grad()
        loss = float(plan(other, y).array)
        grads = [p.grad.copy() for p in model.parameters()]
        model.zero_grad()
        eager = F.cross_entropy(model(other), y)
        eager.backward()
        assert loss == pytest.approx(float(eager.array), rel=1e-6)
        for g, p in zip(grads, model.parameters()):
            np.testing.assert_allclose(g, p.grad, rtol=1e-5, atol=1e-6)
    assert plan.traces == 1


@pytest.mark.parametrize("kwargs, error, message", [
    ({"key_padding_mask": np.zeros((B, L), bool)}, lm.ShapeError,
     r"^MultiheadAttention: expected key_padding_mask of shape \(2, 5\) for query \(2, 3, 4\) "
     r"\(batch first\) and 2 heads; got \(2, 3\)$"),
    ({"attn_mask": np.zeros((B, L, S), bool)}, lm.ShapeError,
     r"expected attn_mask of shape \(3, 5\) or \(4, 3, 5\) .* got \(2, 3, 5\)$"),
    ({"key_padding_mask": np.zeros((B, S), np.int64)}, TypeError,
     r"key_padding_mask must be boolean \(True where attention is not allowed, as in "
     r"PyTorch\) or floating"),
])
def test_mask_errors_name_the_mask_and_the_shapes_it_takes(kwargs, error, message) -> None:
    attn = nn.MultiheadAttention(E, H, batch_first=True)
    q = lm.tensor(np.ones((B, L, E), np.float32))
    kv = lm.tensor(np.ones((B, S, E), np.float32))
    with pytest.raises(error, match=message):
        attn(q, kv, kv, **kwargs)


def test_function_mask_errors_name_the_shapes() -> None:
    q, k = lm.tensor(np.ones((2, 3, 4))), lm.tensor(np.ones((2, 5, 4)))
    with pytest.raises(lm.ShapeError, match=r"attn_mask of shape \(3, 4\) does not broadcast "
                                            r"to \(\.\.\., L, S\) = \(\.\.\., 3, 5\)"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=np.ones((3, 4), bool))
    with pytest.raises(TypeError, match="attn_mask must be boolean"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=np.ones((3, 5), np.int64))
