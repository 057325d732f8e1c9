"""RNN, LSTM and GRU against PyTorch's: bidirectional, stacked, projected, packed,
unbatched, both layouts; same weights (torch's state dict), outputs, final states and
gradients in float64."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina.nn.utils import rnn as lrnn

torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

F_IN, H, B, T = 3, 4, 3, 5


def _pair(kind, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(F_IN, H, **kwargs).double()
    ours = getattr(nn, kind)(F_IN, H, **kwargs).to("float64")
    names = [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == names
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [result.data if isinstance(result, (trnn.PackedSequence, lrnn.PackedSequence))
            else result]


def _check(theirs_out, ours_out, tins, lins):
    touts, louts = _flat(theirs_out), _flat(ours_out)
    assert len(touts) == len(louts)
    rng = np.random.default_rng(5)
    grads = [rng.standard_normal(tuple(t.shape)) for t in touts]
    sum(((t * torch.tensor(g)).sum() for t, g in zip(touts, grads))).backward()
    sum(((y * g).sum() for y, g in zip(louts, grads))).backward()
    for t, y in zip(touts, louts):
        assert tuple(y.shape) == tuple(t.shape)
        np.testing.assert_allclose(y.array, t.detach().numpy(), atol=1e-10)
    for t, y in zip(tins, lins):
        np.testing.assert_allclose(y.grad.array, t.grad.numpy(), atol=1e-10)


CONFIGS = [
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 3, "bidirectional": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True, "num_layers": 3}),
]


def _x(batch_first, seed=1):
    x = np.random.default_rng(seed).standard_normal((B, T, F_IN) if batch_first else (T, B, F_IN))
    return torch.tensor(x, requires_grad=True), lm.tensor(x, requires_grad=True)


@pytest.mark.parametrize("kind, kwargs", CONFIGS)
def test_padded_input_with_a_given_state_matches_pytorch(kind, kwargs) -> None:
    theirs, ours = _pair(kind, **kwargs)
    tx, lx = _x(kwargs.get("batch_first", False))
    rng = np.random.default_rng(2)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h = rng.standard_normal((layers, B, kwargs.get("proj_size") or H))
    states = [h] if kind != "LSTM" else [h, rng.standard_normal((layers, B, H))]
    tstates = [torch.tensor(s, requires_grad=True) for s in states]
    lstates = [lm.tensor(s, requires_grad=True) for s in states]
    tout = theirs(tx, tstates[0] if kind != "LSTM" else tuple(tstates))
    lout = ours(lx, lstates[0] if kind != "LSTM" else tuple(lstates))
    _check(tout, lout, [tx, *tstates], [lx, *lstates])


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("kind, kwargs", CONFIGS)
def test_packed_sequences_match_pytorch(kind, kwargs, enforce_sorted) -> None:
    theirs, ours = _pair(kind, **kwargs)
    batch_first = kwargs.get("batch_first", False)
    tx, lx = _x(batch_first)
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    tpacked = trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
    lpacked = lrnn.pack_padded_sequence(lx, lengths, batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(lpacked.batch_sizes.numpy(), tpacked.batch_sizes.numpy())
    tout, tstate = theirs(tpacked)
    lout, lstate = ours(lpacked)
    tpad, tlen = trnn.pad_packed_sequence(tout, batch_first=batch_first, padding_value=-1.0)
    lpad, llen = lrnn.pad_packed_sequence(lout, batch_first=batch_first, padding_value=-1.0)
    np.testing.assert_array_equal(llen.numpy(), tlen.numpy())
    _check((tpad, tstate), (lpad, lstate), [tx], [lx])


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_unbatched_input_matches_pytorch(kind) -> None:
    theirs, ours = _pair(kind, num_layers=2)
    x = np.random.default_rng(3).standard_normal((T, F_IN))
    tx, lx = torch.tensor(x, requires_grad=True), lm.tensor(x, requires_grad=True)
    _check(theirs(tx), ours(lx), [tx], [lx])


def test_dropout_acts_between_layers_in_training_only() -> None:
    theirs, ours = _pair("LSTM", num_layers=2, dropout=0.5)
    tx, lx = _x(False)
    theirs.eval()
    ours.eval()
    _check(theirs(tx), ours(lx), [tx], [lx])
    ours.train()
    lm.manual_seed(0)
    first = ours(lx)[0].array
    lm.manual_seed(0)
    np.testing.assert_array_equal(ours(lx)[0].array, first)
    assert not np.allclose(first, ours.eval()(lx)[0].array)
    with pytest.warns(UserWarning, match="dropout acts between recurrent layers"):
        nn.GRU(2, 3, dropout=0.2)


def test_pad_sequence_and_pack_sequence_match_pytorch() -> None:
    rng = np.random.default_rng(4)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 1)]
    for batch_first in (True, False):
        for side in ("right", "left"):
            ours = lrnn.pad_sequence([lm.tensor(s) for s in seqs], batch_first, 7.0, side)
            theirs = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first, 7.0, side)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = lrnn.pack_sequence([lm.tensor(s) for s in seqs], enforce_sorted=False)
    theirs = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
    np.testing.assert_array_equal(ours.sorted_indices.numpy(), theirs.sorted_indices.numpy())
    for a, b in zip(lrnn.unpack_sequence(ours), seqs):
        np.testing.assert_array_equal(a.numpy(), b)


def test_unsorted_lengths_say_how_to_fix_it() -> None:
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order.*enforce_sorted"):
        lrnn.pack_padded_sequence(lm.zeros(4, 2, 3), [2, 4])


def test_lstm_sequence_leaves_its_x_gates_alone_and_the_layer_gives_pytorchs_gradients():
    """F.lstm_sequence activates a copy of the x-gates a caller passes; only the LSTM
    layer, which makes them for it alone, lets it work in place. Both give PyTorch's
    values and gradients."""
    import torch

    import lamina.functions as F

    rng = np.random.default_rng(3)
    xg = rng.standard_normal((5, 2, 12)).astype(np.float32)
    h0, c0 = (lm.tensor(np.zeros((2, 3), np.float32)) for _ in range(2))
    W = lm.tensor(rng.standard_normal((12, 3)).astype(np.float32))
    gates = lm.tensor(xg.copy())
    F.lstm_sequence(gates, h0, c0, W)
    np.testing.assert_array_equal(gates.numpy(), xg)

    ours, theirs = nn.LSTM(4, 3, num_layers=2), torch.nn.LSTM(4, 3, num_layers=2)
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    x = rng.standard_normal((6, 2, 4)).astype(np.float32)
    xl, xt = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, _ = ours(xl)
    out_t, _ = theirs(xt)
    (out * out).sum().backward()
    (out_t * out_t).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), atol=1e-5)
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_gru_layer_runs_one_sequence_op_with_pytorchs_values_and_gradients(bias):
    """The GRU layer's whole recurrence is one op (F.gru_sequence): its x-gates left
    alone, and every output, input and weight gradient PyTorch's, stacked two deep."""
    import torch

    import lamina.functions as F

    rng = np.random.default_rng(4)
    xg = rng.standard_normal((5, 2, 9)).astype(np.float32)
    gates = lm.tensor(xg.copy())
    F.gru_sequence(gates, lm.tensor(np.zeros((2, 3), np.float32)),
                   lm.tensor(rng.standard_normal((9, 3)).astype(np.float32)))
    np.testing.assert_array_equal(gates.numpy(), xg)

    ours = nn.GRU(4, 16, num_layers=2, bias=bias)
    theirs = torch.nn.GRU(4, 16, num_layers=2, bias=bias)
    with torch.no_grad():
        for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    x = rng.standard_normal((7, 3, 4)).astype(np.float32)
    h0 = rng.standard_normal((2, 3, 16)).astype(np.float32)
    xl, xt = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, h = ours(xl, lm.tensor(h0))
    out_t, h_t = theirs(xt, torch.tensor(h0))
    ((out * out).sum() + h.sum()).backward()
    ((out_t * out_t).sum() + h_t.sum()).backward()
    np.testing.assert_allclose(out.detach().numpy(), out_t.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(h.detach().numpy(), h_t.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), atol=1e-5)
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs, batch", [
    ({"num_layers": 2, "bidirectional": True}, B),
    ({"bias": False, "batch_first": True}, B),
    ({}, 1),
])
def test_lstm_without_gradients_gives_pytorchs_outputs(dtype, kwargs, batch):
    """Under no_grad nn.LSTM runs its inference op (gate-major steps, one GEMM of
    [W_ih | W_hh | b] a step; compiled in float32): outputs and final states equal
    PyTorch's, from given initial states, and equal the training path's."""
    theirs, ours = _pair("LSTM", **kwargs)
    theirs, ours = theirs.to(getattr(torch, dtype)), ours.to(dtype)
    layers = 2 * kwargs.get("num_layers", 1) if kwargs.get("bidirectional") else 1
    rng = np.random.default_rng(7)
    shape = (batch, T, F_IN) if kwargs.get("batch_first") else (T, batch, F_IN)
    x, h0, c0 = (rng.standard_normal(s).astype(dtype)
                 for s in (shape, (layers, batch, H), (layers, batch, H)))
    with torch.no_grad():
        want = theirs(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
    trained = ours(lm.tensor(x), (lm.tensor(h0), lm.tensor(c0)))  # records a graph
    with lm.no_grad():
        got = ours(lm.tensor(x), (lm.tensor(h0), lm.tensor(c0)))
    assert got[0].creator is None
    tol = 1e-12 if dtype == "float64" else 2e-6
    for w, g, t in zip(_flat(want), _flat(got), _flat(trained)):
        assert g.dtype == t.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.array, w.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(g.array, t.array, rtol=tol, atol=tol)


def test_lstm_with_only_its_biases_trainable_still_records_their_gradients():
    """The inference op runs only where nothing wants a gradient: a frozen LSTM whose
    biases train gets PyTorch's bias gradients."""
    theirs, ours = _pair("LSTM")
    for module in (theirs, ours):
        for name, p in module.named_parameters():
            p.requires_grad = name.startswith("bias")
    x = np.random.default_rng(8).standard_normal((T, B, F_IN))
    _check(theirs(torch.tensor(x)), ours(lm.tensor(x)),
           [p for n, p in theirs.named_parameters() if n.startswith("bias")],
           [p for n, p in ours.named_parameters() if n.startswith("bias")])
