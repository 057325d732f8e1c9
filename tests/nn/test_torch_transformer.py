"""The transformer family against PyTorch's: same weights (loaded from torch's state dict),
same inputs and masks, outputs and gradients in float64, both layouts."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")

E, H, B, S, T = 8, 2, 3, 6, 4


def _pair(build):
    """The same module in torch and lamina (`build(namespace)`), lamina's given torch's
    weights, both in float64 and without dropout."""
    torch.manual_seed(0)
    theirs = build(torch.nn).double()
    ours = build(nn).to("float64")
    result = ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    return theirs, ours


def _inputs(*shapes, batch_first):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    if not batch_first:
        arrays = [a.transpose(1, 0, 2).copy() for a in arrays]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [lm.tensor(a, requires_grad=True) for a in arrays])


def _compare(ty, ly, tins, lins):
    g = np.random.default_rng(2).standard_normal(ly.shape)
    ty.backward(torch.tensor(g))
    ly.backward(g)
    np.testing.assert_allclose(ly.array, ty.detach().numpy(), atol=1e-10)
    for t, a in zip(tins, lins):
        np.testing.assert_allclose(a.grad.array, t.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [True, False])
def test_an_encoder_stack_matches_pytorch(batch_first, norm_first) -> None:
    def build(ns):
        layer = ns.TransformerEncoderLayer(E, H, 16, dropout=0.0, activation="gelu",
                                           batch_first=batch_first, norm_first=norm_first)
        return ns.TransformerEncoder(layer, 3, norm=ns.LayerNorm(E), enable_nested_tensor=False)

    theirs, ours = _pair(build)
    tins, lins = _inputs((B, S, E), batch_first=batch_first)
    padding = np.zeros((B, S), bool)
    padding[1, 4:] = True
    causal = np.triu(np.ones((S, S), bool), 1)
    ty = theirs(tins[0], mask=torch.tensor(causal),
                src_key_padding_mask=torch.tensor(padding))
    ly = ours(lins[0], mask=causal, src_key_padding_mask=padding)
    _compare(ty, ly, tins, lins)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [True, False])
def test_a_decoder_layer_matches_pytorch(batch_first, norm_first) -> None:
    theirs, ours = _pair(lambda ns: ns.TransformerDecoderLayer(
        E, H, 16, dropout=0.0, batch_first=batch_first, norm_first=norm_first))
    tins, lins = _inputs((B, T, E), (B, S, E), batch_first=batch_first)
    memory_padding = np.zeros((B, S), bool)
    memory_padding[0, 3:] = True
    tgt_mask = np.triu(np.ones((T, T), bool), 1)
    ty = theirs(*tins, tgt_mask=torch.tensor(tgt_mask),
                memory_key_padding_mask=torch.tensor(memory_padding))
    ly = ours(*lins, tgt_mask=tgt_mask, memory_key_padding_mask=memory_padding)
    _compare(ty, ly, tins, lins)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("batch_first", [True, False])
def test_a_transformer_matches_pytorch_in_training_and_evaluation(batch_first) -> None:
    theirs, ours = _pair(lambda ns: ns.Transformer(E, H, 2, 2, 16, dropout=0.0,
                                                   batch_first=batch_first))
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(T, dtype="float64")
    expected = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    np.testing.assert_array_equal(tgt_mask.numpy(), expected.numpy())
    for mode in ("train", "eval"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        tins, lins = _inputs((B, S, E), (B, T, E), batch_first=batch_first)
        ty = theirs(*tins, tgt_mask=expected)
        ly = ours(*lins, tgt_mask=tgt_mask)
        _compare(ty, ly, tins, lins)


def test_the_transformer_initialises_every_matrix_as_pytorch_does() -> None:
    """Xavier-uniform over every matrix: the bound is sqrt(6 / (fan_in + fan_out))."""
    model = nn.Transformer(16, 4, 1, 1, 32)
    for name, p in model.named_parameters():
        if p.ndim > 1:
            bound = np.sqrt(6 / sum(p.shape))
            assert np.abs(p.array).max() <= bound, name
            assert np.abs(p.array).max() > 0.8 * bound, name


def test_multihead_attention_unbatched_and_with_other_key_sizes_matches_pytorch() -> None:
    theirs, ours = _pair(lambda ns: ns.MultiheadAttention(E, H, kdim=3, vdim=5))
    assert ours.in_proj_weight is None and ours.k_proj_weight.shape == (E, 3)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((T, E), (S, 3), (S, 5))]
    tins = [torch.tensor(a, requires_grad=True) for a in arrays]
    lins = [lm.tensor(a, requires_grad=True) for a in arrays]
    ty, tw = theirs(*tins, average_attn_weights=False)
    ly, lw = ours(*lins, average_attn_weights=False)
    assert lw.shape == tuple(tw.shape) == (H, T, S)
    np.testing.assert_allclose(lw.array, tw.detach().numpy(), atol=1e-12)
    _compare(ty, ly, tins, lins)


def test_is_causal_without_a_mask_is_pytorch_s_error() -> None:
    attn = nn.MultiheadAttention(E, H)
    x = lm.zeros(T, B, E)
    with pytest.raises(RuntimeError, match="is_causal is a hint that attn_mask is the causal"):
        attn(x, x, x, is_causal=True)


def test_a_transformer_with_mismatched_batches_says_so() -> None:
    model = nn.Transformer(E, H, 1, 1, 16)
    with pytest.raises(RuntimeError, match=r"the batch number of src and tgt must be equal; "
                       r"got src \(5, 2, 8\) and tgt \(4, 3, 8\)"):
        model(lm.zeros(5, 2, E), lm.zeros(4, 3, E))
