"""A recurrent layer reading an embedding's rows projects the embedding's table instead
(lamina.functions.recurrent_lookup.input_projection): PyTorch's values and gradients, the
same graph taken where it is not the smaller product, and where something waits for the
rows' own gradient or the table changed since the lookup."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina.functions.connection import Embedding, Linear
from lamina.functions.recurrent_lookup import LSTMLookupSequence, looked_up

torch = pytest.importorskip("torch")

V, F_IN, H = 5, 3, 4


def _models(kind, vocab=V, **kwargs):
    """torch's and lamina's embedding and recurrent layer, same float64 weights."""
    torch.manual_seed(0)
    temb = torch.nn.Embedding(vocab, F_IN).double()
    trec = getattr(torch.nn, kind)(F_IN, H, **kwargs).double()
    emb, rec = nn.Embedding(vocab, F_IN).to("float64"), getattr(nn, kind)(F_IN, H, **kwargs)
    rec = rec.to("float64")
    emb.load_state_dict({k: v.numpy() for k, v in temb.state_dict().items()})
    rec.load_state_dict({k: v.detach().numpy() for k, v in trec.state_dict().items()})
    return (temb, trec), (emb, rec)


def _ids(shape, vocab=V):
    return np.random.default_rng(1).integers(0, vocab, shape)


def _projected_by_table(out):
    """Whether the graph behind `out` holds a lookup in a projected table (the LSTM's
    inside its recurrence)."""
    seen, stack = set(), [out.creator]
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        inputs = vars(f).get("inputs", ())
        if type(f) in (Embedding, LSTMLookupSequence) and len(inputs) >= 2 \
                and type(inputs[1].creator) is Linear:
            return True
        stack.extend(x.creator for x in inputs)
    return False


def _compare(theirs, ours, tparams, lparams):
    rng = np.random.default_rng(2)
    weights = rng.standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(weights)).sum().backward()
    (ours * lm.tensor(weights)).sum().backward()
    np.testing.assert_allclose(ours.array, theirs.detach().numpy(), atol=1e-12)
    for t, y in zip(tparams, lparams):
        np.testing.assert_allclose(y.grad.array, t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", {"batch_first": True}), ("LSTM", {}), ("LSTM", {"num_layers": 2}),
    ("GRU", {"batch_first": True}), ("RNN", {}), ("LSTM", {"proj_size": 2}),
    ("LSTM", {"bias": False, "batch_first": True}),
])
def test_a_layer_over_an_embedding_projects_the_table_with_pytorchs_gradients(kind, kwargs):
    (temb, trec), (emb, rec) = _models(kind, **kwargs)
    ids = _ids((4, 6))
    tout = trec(temb(torch.tensor(ids)))[0]
    out = rec(emb(lm.tensor(ids)))[0]
    assert _projected_by_table(out)
    _compare(tout, out, [*temb.parameters(), *trec.parameters()],
             [*emb.parameters(), *rec.parameters()])


def test_the_projected_table_matches_float64_central_differences():
    _, (emb, rec) = _models("LSTM", batch_first=True)
    ids = lm.tensor(_ids((3, 4)))

    def fn(E, W_ih):
        emb.weight, rec.weight_ih_l0 = E, W_ih
        out = rec(emb(ids))[0]
        assert _projected_by_table(out)
        return out

    E = lm.tensor(emb.weight.array.copy(), requires_grad=True)
    W = lm.tensor(rec.weight_ih_l0.array.copy(), requires_grad=True)
    assert lm.gradcheck(fn, [E, W])


@pytest.mark.parametrize("case", ["fewer ids than rows", "padding row", "retain_grad",
                                  "hook", "table changed", "lookup differentiated"])
def test_the_rows_are_projected_where_the_table_is_not_the_way(case):
    vocab = 40 if case == "fewer ids than rows" else V
    (temb, trec), (emb, rec) = _models("LSTM", vocab=vocab, batch_first=True)
    if case == "padding row":
        temb.padding_idx = emb.padding_idx = 0
    ids = _ids((3, 4), vocab)
    tx, x = temb(torch.tensor(ids)), emb(lm.tensor(ids))
    if case == "retain_grad":
        tx.retain_grad()
        x.retain_grad()
    seen = []
    if case == "hook":
        x.register_hook(lambda g: seen.append(g.shape))
    if case == "lookup differentiated":  # its op released: the rows are all that is left
        tx.sum().backward()
        x.sum().backward()
    if case == "table changed":  # after the lookup: x keeps the rows it read
        with torch.no_grad():
            temb.weight.mul_(2)
        with lm.no_grad():
            emb.weight.mul_(2)
    assert looked_up(x.transpose(0, 1)) is None
    tout, out = trec(tx)[0], rec(x)[0]
    assert not _projected_by_table(out)
    if case == "lookup differentiated":  # a second backward through it would fail in both
        np.testing.assert_allclose(out.array, tout.detach().numpy(), atol=1e-12)
        return
    _compare(tout, out, [*temb.parameters(), *trec.parameters()],
             [*emb.parameters(), *rec.parameters()])
    if case == "retain_grad":
        np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), atol=1e-12)
    assert seen == ([(3, 4, F_IN)] if case == "hook" else [])


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_double_backward_through_the_projected_table_matches_pytorch(kind):
    (temb, trec), (emb, rec) = _models(kind, batch_first=True)
    ids = _ids((3, 4))
    tout, out = trec(temb(torch.tensor(ids)))[0], rec(emb(lm.tensor(ids)))[0]
    assert _projected_by_table(out)
    (tg,) = torch.autograd.grad((tout ** 2).sum(), [trec.weight_hh_l0], create_graph=True)
    (g,) = lm.autograd.grad((out ** 2).sum(), [rec.weight_hh_l0], create_graph=True)
    np.testing.assert_allclose(g.array, tg.detach().numpy(), atol=1e-12)
    (tg ** 2).sum().backward()
    (g ** 2).sum().backward()
    np.testing.assert_allclose(emb.weight.grad.array, temb.weight.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(rec.weight_ih_l0.grad.array, trec.weight_ih_l0.grad.numpy(),
                               atol=1e-10)
