"""Ops whose backward reads none of an input's values (Add, Sub, ReLU, the linear ops:
keeps_inputs = False) keep that input as its place in the graph, not its array: a batch
norm's output under a ReLU, a residual sum, the input of a copy (`contiguous`, `cat`),
are freed once the next op has read them, as in PyTorch.
Gradients, double backward, in-place writes and the graph's walk must not notice."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import lamina as lm
import lamina.nn.functional as F

# (name, lamina's op, PyTorch's op): each reads its first input h only for its graph edge
OPS = [("relu", lambda h, b: F.relu(h), lambda h, b: torch.relu(h)),
       ("add", lambda h, b: h + b, lambda h, b: h + b),
       ("sub", lambda h, b: h - b, lambda h, b: h - b),
       ("rsub", lambda h, b: b - h, lambda h, b: b - h),
       # linear ops, whose backward is their adjoint: a copy's input is freed once copied
       ("contiguous", lambda h, b: h.t().contiguous().t() + b,
        lambda h, b: h.t().contiguous().t() + b),
       ("cat", lambda h, b: lm.cat([h, b], 1)[:, 15:45], lambda h, b: torch.cat([h, b], 1)[:, 15:45]),
       ("pad", lambda h, b: F.pad(h, (1, 1))[:, 1:-1] * b,
        lambda h, b: torch.nn.functional.pad(h, (1, 1))[:, 1:-1] * b),
       # ops that keep their output: their rules differentiate through it
       ("softmax", lambda h, b: F.softmax(h, -1) * b,
        lambda h, b: torch.softmax(h, -1) * b),
       ("log_softmax", lambda h, b: F.log_softmax(h, 0) * b,
        lambda h, b: torch.log_softmax(h, 0) * b),
       ("sigmoid", lambda h, b: F.sigmoid(h) * b, lambda h, b: torch.sigmoid(h) * b),
       ("tanh", lambda h, b: F.tanh(h) * b, lambda h, b: torch.tanh(h) * b)]


def _leaves(*arrays: np.ndarray) -> tuple[list[lm.Tensor], list[torch.Tensor]]:
    return ([lm.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def _same_grads(ours: list[lm.Tensor], theirs: list[torch.Tensor], rtol: float) -> None:
    for x, t in zip(ours, theirs):
        assert (x.grad is None) == (t.grad is None)
        if x.grad is not None:
            np.testing.assert_allclose(x.grad.array, t.grad.numpy(), rtol=rtol, atol=1e-12)


def _data(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((40, 30)), rng.standard_normal((40, 30))]


@pytest.mark.parametrize(("name", "op", "torch_op"), OPS, ids=[o[0] for o in OPS])
def test_an_input_backward_does_not_read_is_freed_and_gradients_match_pytorch(
        name, op, torch_op) -> None:
    (x, b), (tx, tb) = _leaves(*_data())
    h = x * 2  # an op's output: once y is made, nothing but the graph could hold it
    watched = weakref.ref(h.array)
    y = op(h, b)
    del h
    gc.collect()
    assert watched() is None, f"{name} kept its input's array"
    (y * y).sum().backward()
    ty = torch_op(tx * 2, tb)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-12)
    _same_grads([x, b], [tx, tb], 1e-12)


def test_an_op_whose_backward_reads_its_input_keeps_it() -> None:
    (x, b), _ = _leaves(*_data())
    h = x * 2
    watched = weakref.ref(h.array)
    y = h * b  # Mul's backward reads h
    del h
    gc.collect()
    assert watched() is not None
    (y * y).sum().backward()
    gc.collect()
    assert watched() is None  # and frees it with the graph


@pytest.mark.parametrize(("name", "op", "torch_op"), OPS, ids=[o[0] for o in OPS])
def test_double_backward_through_a_freed_input_matches_pytorch(name, op, torch_op) -> None:
    (x, b), (tx, tb) = _leaves(*_data(1))

    def loss(t, x, b, f):
        h = x * x
        return (f(h - 0.5, b) ** 2 * x).sum()

    (g,) = lm.autograd.grad(loss(lm, x, b, op), [x], create_graph=True)
    (tg,) = torch.autograd.grad(loss(torch, tx, tb, torch_op), [tx], create_graph=True)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(g.array, tg.detach().numpy(), rtol=1e-10)
    _same_grads([x, b], [tx, tb], 1e-10)


def test_second_derivatives_through_relu_and_add_match_central_differences() -> None:
    rng = np.random.default_rng(2)
    x = lm.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = lm.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert lm.autograd.gradgradcheck(lambda x, b: F.relu(x * x - b) * x + (x - b) ** 3,
                                     (x, b))


def test_a_write_in_place_after_the_op_leaves_its_edge_as_it_read_it() -> None:
    """Add and ReLU read no values: PyTorch lets their input be written in place after
    them, and the gradient flows along the edge as the op read it."""
    (x, b), (tx, tb) = _leaves(*_data(3))
    for t, x_, b_ in ((lm, x, b), (torch, tx, tb)):
        h = x_ * 2
        y = (t.relu(h) + h) * b_
        h.mul_(3)  # h's creator is now the write; the ops above read the Mul
        (y + h).sum().backward()
    _same_grads([x, b], [tx, tb], 1e-12)


def test_the_graph_walk_hooks_and_retained_gradients_see_a_freed_input() -> None:
    (x, b), (tx, tb) = _leaves(*_data(4))
    h, th = x * 2, tx * 2
    h.retain_grad()
    th.retain_grad()
    hooked = []
    k, tk = x * 3, tx * 3
    k.register_hook(lambda g: hooked.append(g.array.copy()))
    tk.register_hook(lambda g: hooked.append(g.detach().numpy().copy()))
    y, ty = F.relu(h) + k, torch.relu(th) + tk
    assert ([f.name() for f, _ in y.grad_fn.next_functions]
            == [f.name() for f, _ in ty.grad_fn.next_functions])
    del k, tk  # the hooks live on with the graph, as in PyTorch
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    assert len(hooked) == 2
    np.testing.assert_allclose(hooked[0], hooked[1], rtol=1e-12)
    np.testing.assert_allclose(h.grad.array, th.grad.numpy(), rtol=1e-12)
    _same_grads([x, b], [tx, tb], 1e-12)


def test_a_places_stand_in_array_has_a_shape_and_refuses_its_values() -> None:
    (x, b), _ = _leaves(*_data())
    y = (x * 2) + b
    place, leaf = y.creator.inputs
    assert leaf is b  # leaves are kept whole: their arrays live on anyway
    assert place.shape == (40, 30) and place.dtype == np.float64
    assert place.creator is not None and place.creator.name == "Mul"
    with pytest.raises(RuntimeError, match="keeps_inputs"):
        np.asarray(place.array)


def test_gelu_keeps_its_input_alone_as_pytorch_does() -> None:
    """The fused GELU keeps x (its backward makes the derivative again), not x and the
    derivative: with the next layer keeping its output, two arrays of the activation's
    size where three were."""
    import tracemalloc

    x = lm.tensor(np.random.default_rng(5).standard_normal((500, 1000)).astype(np.float32),
                  requires_grad=True)
    (F.gelu(x * 1.0) * 1.0).sum().backward()  # loads the kernels (numba's memory) first
    x.grad = None
    tracemalloc.start()
    try:
        h = x * 1.0
        y = F.gelu(h)
        del h
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    size = x.array.nbytes
    assert 2 * size <= held < 2.5 * size  # h (saved) and y; no derivative
    (y * y).sum().backward()
    tx = torch.tensor(x.array, requires_grad=True)
    (torch.nn.functional.gelu(tx) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_attention_frees_its_scores_and_matches_pytorch_to_the_second_derivative() -> None:
    """Causal attention's softmax keeps its output, not the scores: a (heads, L, L) array
    each layer that PyTorch's attention does not keep either."""
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((2, 3, 16, 8)) for _ in range(3)]
    (q, k, v), (tq, tk, tv) = _leaves(*arrays)
    weights = lm.functions.attention.attention_weights(q, k, None, None, True, None)
    scores = weights.creator.inputs[0]
    assert scores.shape == (2, 3, 16, 16)
    with pytest.raises(RuntimeError, match="keeps_inputs"):
        np.asarray(scores.array)

    def loss(t, q, k, v, sdpa):
        return (sdpa(q * q, k, v, is_causal=True) ** 2 * q).sum()

    (g,) = lm.autograd.grad(loss(lm, q, k, v, F.scaled_dot_product_attention), [q],
                            create_graph=True)
    (tg,) = torch.autograd.grad(loss(torch, tq, tk, tv, _torch_attention), [tq],
                                create_graph=True)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    np.testing.assert_allclose(g.array, tg.detach().numpy(), rtol=1e-9, atol=1e-12)
    _same_grads([q, k, v], [tq, tk, tv], 1e-9)


def _torch_attention(q, k, v, is_causal):
    """PyTorch's attention composed of ops that have second derivatives (its fused
    kernel has none)."""
    length = q.shape[-2]
    mask = torch.ones(length, length, dtype=torch.bool).tril()
    scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1) @ v


def test_dropout_frees_its_input_and_its_gradients_are_its_mask() -> None:
    (x, _), _ = _leaves(*_data(7))
    h = x * 2
    watched = weakref.ref(h.array)
    y = F.dropout(h, 0.3)
    del h
    gc.collect()
    assert watched() is None
    (g,) = lm.autograd.grad((y * y).sum(), [x], create_graph=True)
    mask = (y.array != 0) / 0.7
    np.testing.assert_allclose(g.array, 2 * y.array * mask * 2, rtol=1e-12)
    (g.sum()).backward()
    np.testing.assert_allclose(x.grad.array, 8 * mask * mask, rtol=1e-12)
