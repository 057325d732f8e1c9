"""MultiheadAttention beyond the generic layer suites: causality, cross-attention against
PyTorch, plans, ONNX opsets, and the errors a user meets."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _float64(layer):
    for p in layer.parameters():
        p.array = p.array.astype(np.float64)
    return layer


@pytest.mark.parametrize("causal", [True, False])
def test_a_causal_position_sees_only_itself_and_the_past(causal) -> None:
    lm.manual_seed(0)
    attn = _float64(nn.SelfAttention(4, 2, causal=causal, batch_first=True))
    x = lm.tensor(_x(2, 6, 4), requires_grad=True)
    attn(x)[:, 2].sum().backward()  # position 2's output
    reach = np.abs(x.grad).sum(axis=(0, 2))
    assert np.all(reach[:3] > 0)
    assert np.all(reach[3:] == 0) if causal else np.all(reach[3:] > 0)


def test_attention_weights_are_a_softmax_over_the_keys() -> None:
    q, k = _x(1, 3, 4), _x(1, 5, 4, seed=1)
    v = np.eye(5)[None]  # one-hot values: the output rows are the attention weights
    w = F.scaled_dot_product_attention(*(lm.tensor(a) for a in (q, k, v))).array
    np.testing.assert_allclose(w.sum(axis=-1), 1, rtol=1e-12)
    scores = q[0] @ k[0].T / 2
    np.testing.assert_allclose(w[0], np.exp(scores) / np.exp(scores).sum(1, keepdims=True),
                               rtol=1e-12)


def test_cross_attention_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(6, 2, batch_first=True)
    ours = nn.MultiheadAttention(6, 2, batch_first=True)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    q, kv = _x(2, 3, 6).astype(np.float32), _x(2, 7, 6, seed=1).astype(np.float32)
    lq, lkv = lm.tensor(q, requires_grad=True), lm.tensor(kv, requires_grad=True)
    tq, tkv = torch.tensor(q, requires_grad=True), torch.tensor(kv, requires_grad=True)
    ly, lw = ours(lq, lkv, lkv)
    ty, tw = theirs(tq, tkv, tkv)
    (ly.sum() + (lw * lw).sum()).backward()
    (ty.sum() + (tw * tw).sum()).backward()
    np.testing.assert_allclose(ly.array, ty.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(lw.array, tw.detach().numpy(), atol=1e-6)
    assert ours(lq, lkv, lkv, need_weights=False)[1] is None
    np.testing.assert_allclose(lkv.grad, tkv.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(ours.in_proj_weight.grad, theirs.in_proj_weight.grad.numpy(),
                               atol=1e-5)


def test_a_compiled_causal_model_equals_eager_and_retraces_per_length() -> None:
    lm.manual_seed(0)
    model = nn.Sequential(nn.Embedding(11, 8), nn.SelfAttention(8, 2, causal=True, batch_first=True),
                          nn.LayerNorm(8), nn.Linear(8, 11))

    def loss_fn(out, y):
        return F.cross_entropy(F.reshape(out, (-1, 11)), F.reshape(y, (-1,)))

    rng = np.random.default_rng(0)
    plan = None
    for length in (5, 9):
        x, y = (lm.tensor(rng.integers(0, 11, (4, length))) for _ in range(2))
        eager = loss_fn(model(x), y)
        eager.backward()
        grads = [p.grad.copy() for p in model.parameters()]
        model.zero_grad()
        plan = plan or lm.plan.compile(model, loss_fn, (x, y))
        assert plan(x, y).item() == pytest.approx(eager.item(), rel=1e-6)
        for p, g in zip(model.parameters(), grads):
            np.testing.assert_allclose(p.grad, g, rtol=1e-5, atol=1e-7)
        model.zero_grad()
    assert len(plan.programs) == 2


def test_shape_errors_say_what_attention_expects() -> None:
    attn = nn.SelfAttention(8, 2, batch_first=True)
    with pytest.raises(lm.ShapeError, match=r"^SelfAttention: expected query, key and "
                       r"value \(B, T, E\) with features embed_dim = 8.*got \(2, 5, 6\), .*build "
                       r"the layer with embed_dim=6$"):
        attn(lm.tensor(np.ones((2, 5, 6), np.float32)))
    attn = nn.MultiheadAttention(8, 2, batch_first=True)
    with pytest.raises(TypeError, match=r"takes query, key and value.*use nn.SelfAttention"):
        attn(lm.tensor(np.ones((2, 5, 8), np.float32)))
    with pytest.raises(lm.ShapeError, match=r"keys and values of one length; got \(2, 5, 8\), "
                       r"\(2, 4, 8\), \(2, 3, 8\)$"):
        attn(*(lm.tensor(np.ones((2, n, 8), np.float32)) for n in (5, 4, 3)))
    with pytest.raises(lm.ShapeError, match=r"^scaled_dot_product_attention: .*got q \(3, 4\), "
                       r"k \(5, 3\)"):
        F.scaled_dot_product_attention(*(lm.tensor(np.ones(s)) for s in [(3, 4), (5, 3), (5, 2)]))


@pytest.mark.parametrize("cfg, message", [
    ({"type": "MultiheadAttention", "batch_first": True, "embed_dim": 6, "num_heads": 4},
     r"^model: MultiheadAttention: embed_dim \(6\) must be a positive multiple of num_heads "
     r"\(4\)"),
    ({"type": "MultiheadAttention", "batch_first": True, "embed_dim": 6, "num_heads": 2, "causal": "yes"},
     r"model\.causal: expected bool, got str 'yes'"),
    ({"type": "MultiheadAttention", "batch_first": True, "embed_dim": 6}, r"model\.num_heads: missing"),
    ({"type": "TransformerEncoderLayer", "batch_first": True, "d_model": 8, "nhead": 2, "activation": "tanh"},
     r"^model: TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable; "
     r"got 'tanh'"),
    ({"type": "TransformerEncoderLayer", "batch_first": True, "d_model": 8, "nhead": 3},
     r"^model: TransformerEncoderLayer: MultiheadAttention: embed_dim \(8\) must be a "
     r"positive multiple of num_heads \(3\)"),
])
def test_attention_config_errors_name_the_path(cfg, message) -> None:
    with pytest.raises(nn.ConfigError, match=message):
        nn.from_config(cfg)


def test_a_causal_model_exports_at_opset_14_and_17(tmp_path) -> None:
    """The exported mask is built from the scores' shape with Trilu, which opset 14 (the
    lowest lamina writes) has."""
    ort = pytest.importorskip("onnxruntime")
    lm.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 8), nn.SelfAttention(8, 2, causal=True, batch_first=True),
                          nn.Linear(8, 10)).eval()
    x = np.random.default_rng(0).integers(0, 10, (3, 7))
    for opset in (14, 17):
        path = lm.io.export_onnx(model, x, tmp_path / f"m{opset}.onnx", opset=opset)
        session = ort.InferenceSession(str(path))
        (y,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_allclose(y, model(lm.tensor(x)).array, atol=1e-5)


def test_sinusoidal_positions_follow_the_closed_form() -> None:
    pos = nn.PositionalEncoding(4, max_len=50, batch_first=True)
    assert list(pos.state_dict()) == []  # the same for every model: not saved
    y = pos(lm.tensor(np.zeros((2, 30, 4)))).array
    p = np.arange(30.0)
    np.testing.assert_allclose(y[1], np.stack([np.sin(p), np.cos(p), np.sin(p / 100),
                                               np.cos(p / 100)], axis=1), atol=1e-6)
    # odd width: column 4 is sin(pos / 10000^(4/5)), with no cos beside it
    odd = nn.PositionalEncoding(5, max_len=3, batch_first=False)(lm.tensor(np.zeros((3, 2, 5))))
    np.testing.assert_allclose(odd.array[2, 0, [0, 1, 4]], [np.sin(2), np.cos(2), np.sin(2 / 10**3.2)],
                               atol=1e-6)


def test_learned_positions_train_only_the_rows_used() -> None:
    pos = nn.PositionalEncoding(3, max_len=10, learned=True, batch_first=True)
    x = lm.tensor(np.ones((2, 4, 3), np.float32))
    pos(x).sum().backward()
    np.testing.assert_array_equal(pos.weight.grad[:4], 2.0)  # two samples
    np.testing.assert_array_equal(pos.weight.grad[4:], 0.0)
    with pytest.raises(lm.ShapeError, match=r"T <= max_len = 10; got \(2, 12, 3\); if the input "
                       r"is right, build the layer with max_len=12$"):
        pos(lm.tensor(np.ones((2, 12, 3), np.float32)))


def test_sequence_cross_entropy_is_cross_entropy_with_classes_last() -> None:
    from lamina.train.losses import LOSSES

    rng = np.random.default_rng(0)
    scores, labels = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, (2, 3))
    loss = LOSSES["sequence_cross_entropy"](lm.tensor(scores), lm.tensor(labels)).item()
    logp = scores - np.log(np.exp(scores).sum(axis=-1, keepdims=True))
    assert loss == pytest.approx(-np.take_along_axis(logp, labels[..., None], -1).mean(), rel=1e-12)
    with pytest.raises(lm.ShapeError, match=r"got \(2, 3, 5\) and \(2, 4\)"):
        LOSSES["sequence_cross_entropy"](lm.tensor(scores), lm.tensor(np.zeros((2, 4), int)))


def test_classes_on_the_last_axis_point_to_sequence_cross_entropy() -> None:
    scores, labels = lm.tensor(np.zeros((2, 3, 5))), lm.tensor(np.zeros((2, 3), int))
    with pytest.raises(lm.ShapeError, match=r"expected labels of shape \(2, 5\) for input "
                       r"\(2, 3, 5\), got \(2, 3\); the classes look to be on the last axis.*"
                       r"loss: sequence_cross_entropy$"):
        F.cross_entropy(scores, labels)
    with pytest.raises(lm.ShapeError) as info:  # no hint where it would not fit
        F.cross_entropy(scores, lm.tensor(np.zeros((2, 4), int)))
    assert "last axis" not in str(info.value)


def test_sampling_a_stateless_model_reads_the_last_window_again_each_step() -> None:
    from lamina.cli_commands import generate

    lm.manual_seed(0)
    model = nn.Sequential(nn.Embedding(6, 8), nn.PositionalEncoding(8, max_len=4, batch_first=True),
                          nn.SelfAttention(8, 2, causal=True, batch_first=True), nn.Linear(8, 6)).eval()
    vocab = "abcdef"
    text = generate(model, vocab, "abcab", length=6, temperature=1e-9, window=4)
    ids = [vocab.index(c) for c in "abcab"]
    for _ in range(6):  # greedy, by hand, from the last 4 characters each time
        ids.append(int(model(lm.tensor(np.array([ids[-4:]]))).array[0, -1].argmax()))
    assert text == "".join(vocab[i] for i in ids)


def test_attention_dropout_acts_in_training_only_and_repeats_with_the_seed() -> None:
    lm.manual_seed(0)
    attn = _float64(nn.SelfAttention(4, 2, dropout=0.5, batch_first=True))
    plain = _float64(nn.SelfAttention(4, 2, batch_first=True))
    plain.load_state_dict(attn.state_dict())
    x = lm.tensor(_x(3, 5, 4))
    runs = []
    for _ in range(2):
        lm.manual_seed(7)
        runs.append(attn(x).array)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], plain(x).array)
    attn.eval()
    np.testing.assert_array_equal(attn(x).array, plain(x).array)
