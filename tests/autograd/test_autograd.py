"""The backward engine, Tensor semantics, and the regression cases every framework has met."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F


def test_chain_deeper_than_the_recursion_limit() -> None:
    x = lm.tensor(np.ones(2), requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0])


def test_value_used_twice_gets_both_gradients() -> None:
    a = lm.tensor(np.array([1.5, -2.0]), requires_grad=True)
    b = a + a
    c = b * b
    c.sum().backward()
    # c = 4a^2, dc/da = 8a
    np.testing.assert_allclose(a.grad, 8 * a.array)


def test_diamond_graph_sums_branches_before_the_shared_node() -> None:
    x = lm.tensor(np.array([0.3, 0.7]), requires_grad=True)
    h = x.exp()
    y = (h * 2 + h.log() + h * h).sum()
    y.backward()
    e = np.exp(x.array)
    np.testing.assert_allclose(x.grad, 2 * e + 1 + 2 * e * e)


def test_two_equal_constants_stay_distinct_leaves() -> None:
    a = lm.tensor(2.0, requires_grad=True)
    b = lm.tensor(2.0, requires_grad=True)
    (a * 3 + b * 5).backward()
    assert a.grad == 3 and b.grad == 5


def test_max_with_ties_shares_the_gradient() -> None:
    x = lm.tensor(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]), requires_grad=True)
    x.amax(dim=1).sum().backward()  # amax splits ties; max(dim) picks the first index
    np.testing.assert_allclose(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    y = lm.tensor(np.array([4.0, 4.0]), requires_grad=True)
    y.max().backward()
    np.testing.assert_allclose(y.grad, [0.5, 0.5])


def test_broadcast_gradient_is_summed_back_to_a_size1_axis() -> None:
    a = lm.tensor(np.ones((3, 1)), requires_grad=True)
    b = lm.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1)
    np.testing.assert_allclose(a.grad[:, 0], b.array.sum(axis=1))
    np.testing.assert_allclose(b.grad, np.ones((3, 4)))


def test_no_grad_records_nothing_and_nests() -> None:
    x = lm.tensor([1.0, 2.0], requires_grad=True)
    with lm.no_grad():
        y = x * 2
        with lm.enable_grad():
            z = x * 3
        w = x * 4
    assert y.creator is None and not y.requires_grad
    assert z.creator is not None and z.requires_grad
    assert w.creator is None
    assert lm.is_grad_enabled()


def test_saved_arrays_are_freed_after_backward() -> None:
    x = lm.tensor(np.random.default_rng(0).standard_normal((50, 50)), requires_grad=True)
    h = x.tanh()
    saved = weakref.ref(h.creator.saved_tensors[0])
    loss = (h * h).sum()
    del h
    gc.collect()
    assert saved() is not None, "tanh's output must live until backward"
    loss.backward()
    gc.collect()
    assert saved() is None, "backward must drop tanh's saved output"


def test_retain_graph_allows_a_second_backward_and_accumulates() -> None:
    x = lm.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * (2 * x.array))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_gradients_accumulate_until_zeroed() -> None:
    x = lm.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad[0] == 5
    x.zero_grad()
    assert x.grad is None


def test_leaf_gradients_never_alias_each_other() -> None:
    a = lm.tensor(np.ones(3), requires_grad=True)
    b = lm.tensor(np.ones(3), requires_grad=True)
    c = lm.tensor(np.ones((3,)), requires_grad=True)
    (a + b + c.reshape(3)).sum().backward()
    assert not np.shares_memory(a.grad, b.grad)
    assert not np.shares_memory(b.grad, c.grad)
    a.grad *= 10  # clipping and optimizers update grads in place
    np.testing.assert_array_equal(b.grad, np.ones(3))


def test_backward_on_non_scalar_needs_a_gradient() -> None:
    x = lm.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"scalar output; got shape \(2, 3\)"):
        (x * 2).backward()
    (x * 2).backward(np.full((2, 3), 0.5))
    np.testing.assert_allclose(x.grad, np.ones((2, 3)))


def test_backward_on_a_constant_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="does not require grad"):
        lm.tensor(1.0).backward()


def test_an_op_returning_a_wrong_gradient_is_named() -> None:
    class Broken(lm.Function):
        def forward(self, x):
            return x * 2

        def backward(self, gy):
            return gy[:1]

    x = lm.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(lm.ShapeError, match=r"Broken.backward.*expected shape \(3,\).*got shape \(1,\)"):
        Broken().apply(x).sum().backward()


def test_backward_stream_yields_each_leaf_once_when_final() -> None:
    rng = np.random.default_rng(0)
    W1 = lm.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    W2 = lm.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    x = lm.tensor(rng.standard_normal((5, 3)))
    loss = F.linear(F.relu(F.linear(x, W1)), W2).sum() + (W1 * W1).sum()
    finished = []
    for leaf in lm.backward_stream(loss):
        finished.append((leaf, leaf.grad.copy()))
    assert [id(t) for t, _ in finished] == [id(W2), id(W1)]  # W2's gradient is ready first
    stream_grads = [g for _, g in finished]
    W1.grad = W2.grad = None
    loss2 = F.linear(F.relu(F.linear(x, W1)), W2).sum() + (W1 * W1).sum()
    loss2.backward()
    np.testing.assert_allclose(stream_grads[0], W2.grad)
    np.testing.assert_allclose(stream_grads[1], W1.grad)


def test_multi_output_op_with_an_unused_output() -> None:
    x = lm.tensor(np.arange(6.0), requires_grad=True)
    a, _, c = F.split(x, 2)
    (a * 2 + c).sum().backward()
    np.testing.assert_allclose(x.grad, [2, 2, 0, 0, 1, 1])


def test_dtype_rules() -> None:
    assert lm.tensor(np.zeros(2)).dtype == np.float64
    assert lm.tensor([1.0, 2]).dtype == np.float32
    assert lm.tensor(3.5).dtype == np.float32
    assert lm.tensor([1, 2]).dtype == np.int64
    assert lm.tensor([1, 2], dtype="float64").dtype == np.float64
    # A NumPy scalar is an array's element, not a Python number: its dtype stays, as
    # does a float64 loss computed under no_grad (a 0-d op result is a NumPy scalar).
    assert lm.tensor(np.float64(0.5)).dtype == np.float64
    assert lm.Tensor(np.float16(0.5)).dtype == np.float16
    with lm.no_grad():
        assert lm.tensor(np.ones(3)).mean().dtype == np.float64
    x = lm.tensor([1.0, 2.0])
    assert (x * 2.5).dtype == np.float32 and (2 - x).dtype == np.float32
    with pytest.raises(RuntimeError, match="only floating-point tensors can require grad"):
        lm.tensor([1, 2], requires_grad=True)


def test_tensor_copies_its_input() -> None:
    a = np.zeros(3)
    t = lm.tensor(a)
    a[0] = 5
    assert t.array[0] == 0
    assert lm.Variable is lm.Tensor


def test_comparisons_and_item() -> None:
    x = lm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = x > 1.5
    assert mask.dtype == bool and mask.creator is None
    np.testing.assert_array_equal(mask.array, [False, True, True])
    assert x[mask].sum().item() == 5.0
    assert hash(x) != hash(lm.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="one-element"):
        x.item()


def test_getitem_with_tensor_index_and_repeats() -> None:
    x = lm.tensor(np.arange(4.0), requires_grad=True)
    idx = lm.tensor(np.array([1, 1, 3]))
    x[idx].sum().backward()
    np.testing.assert_array_equal(x.grad, [0, 2, 0, 1])


def test_numpy_operands_defer_to_tensor() -> None:
    x = lm.tensor(np.ones(2), requires_grad=True)
    y = np.array([2.0, 3.0]) * x + np.float64(1.0)
    assert isinstance(y, lm.Tensor)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [2, 3])


def test_shape_errors_name_the_op_and_both_shapes() -> None:
    with pytest.raises(lm.ShapeError, match=r"matmul.*\(2, 3\) @ \(4, 5\)"):
        lm.tensor(np.ones((2, 3))) @ lm.tensor(np.ones((4, 5)))
    with pytest.raises(lm.ShapeError, match=r"conv2d.*expected 3 channels.*got input \(1, 2, 5, 5\)"):
        F.conv2d(lm.tensor(np.ones((1, 2, 5, 5))), lm.tensor(np.ones((4, 3, 3, 3))))
    with pytest.raises(lm.ShapeError, match=r"cross_entropy.*expected labels of shape \(4,\).*got \(4, 1\)"):
        F.cross_entropy(lm.tensor(np.ones((4, 3))), np.zeros((4, 1), dtype=int))
    with pytest.raises(lm.ShapeError, match=r"linear.*expected \(\.\.\., 3\).*got \(2, 5\)"):
        F.linear(lm.tensor(np.ones((2, 5))), lm.tensor(np.ones((4, 3))))
    with pytest.raises(lm.ShapeError, match=r"mse_loss.*expected \(2, 3\), got \(3, 2\)"):
        F.mse_loss(lm.tensor(np.ones((2, 3))), np.ones((3, 2)))
    with pytest.raises(IndexError, match=r"labels must lie in \[0, 3\).*; got \[3\]$"):
        F.cross_entropy(lm.tensor(np.ones((2, 3))), np.array([0, 3]))
    with pytest.raises(IndexError, match=r"; got \[-2, -1\]$"):  # the bad labels, not the max
        F.cross_entropy(lm.tensor(np.ones((3, 3))), np.array([-1, 2, -2]))
    for op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum"):
        with pytest.raises(lm.ShapeError, match=rf"^{op}: shapes do not broadcast; .*got "
                           r"\(2, 3\) and \(3, 2\)$"):
            getattr(F, op)(lm.tensor(np.ones((2, 3))), lm.tensor(np.ones((3, 2))))
    with pytest.raises(lm.ShapeError, match=r"^where: shapes do not broadcast; got cond "
                       r"\(2,\), a \(3,\) and b \(\)$"):
        F.where(np.array([True, False]), lm.tensor(np.ones(3)), 0.0)
    with pytest.raises(TypeError, match="where: cond must be boolean .*; got float64"):
        F.where(lm.tensor(np.ones(3)), lm.tensor(np.ones(3)), 0.0)


def test_maximum_and_minimum_split_the_gradient_of_a_tie() -> None:
    a = lm.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    b = lm.tensor(np.array([3.0, 2.0, 1.0]), requires_grad=True)
    (F.maximum(a, b) + 10 * F.minimum(a, b)).sum().backward()
    np.testing.assert_array_equal(a.grad, [10.0, 5.5, 1.0])
    np.testing.assert_array_equal(b.grad, [1.0, 5.5, 10.0])


def test_gradcheck_names_the_input_and_element_that_disagree() -> None:
    class WrongSquare(lm.Function):
        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, gy):
            g = 2 * self.x * gy
            g.reshape(-1)[2] += 1.0  # wrong on element 2 only
            return g

    x = lm.tensor(np.arange(4.0), requires_grad=True)
    with pytest.raises(lm.GradcheckError, match=r"input 0 .* element \(2,\)"):
        lm.gradcheck(lambda t: WrongSquare().apply(t), [x])


def test_dropout_is_seeded_inverted_and_identity_in_eval() -> None:
    x = lm.tensor(np.ones((200, 50)))
    lm.manual_seed(3)
    a = F.dropout(x, 0.3).array
    lm.manual_seed(3)
    b = F.dropout(x, 0.3).array
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.02
    assert F.dropout(x, 0.3, training=False) is x


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keeps_a_unit_with_probability_1_minus_p_in_every_dtype(p) -> None:
    """One seed gives one mask in float32 and float64; the kept share is 1 - p within
    four standard deviations; an odd count uses half of the last 64-bit draw."""
    n = 20001
    lm.manual_seed(5)
    a = F.dropout(lm.tensor(np.ones(n, np.float32)), p).array
    lm.manual_seed(5)
    b = F.dropout(lm.tensor(np.ones(n)), p).array
    np.testing.assert_array_equal(a != 0, b != 0)
    assert abs((a != 0).mean() - (1 - p)) < 4 * np.sqrt(p * (1 - p) / n)
    assert not F.dropout(lm.tensor(np.ones(n)), 1.0).array.any()


def test_dropout_gradient_uses_the_same_mask() -> None:
    x = lm.tensor(np.ones(1000), requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, y.array)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_keeps_a_boolean_mask_for_backward(dtype) -> None:
    """Backward reads a byte a unit (where it stayed), not a float mask of x's size;
    the values and the gradient are x * scale and gy * scale where kept, bit for bit."""
    rng = np.random.default_rng(0)
    x = lm.tensor(rng.standard_normal((64, 33)).astype(dtype), requires_grad=True)
    gy = rng.standard_normal((64, 33)).astype(dtype)
    y = F.dropout(x, 0.2)
    keep = y.creator.keep
    assert keep.dtype == bool and keep.shape == x.shape
    scale = dtype(1 / 0.8)
    np.testing.assert_array_equal(y.array, np.where(keep, x.array * scale, 0))
    y.backward(lm.tensor(gy))
    np.testing.assert_array_equal(x.grad.array, np.where(keep, gy * scale, 0))


def test_batch_norm_updates_running_statistics_like_pytorch() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 4)) * 2 + 1
    rm, rv = np.zeros(3), np.ones(3)
    F.batch_norm(lm.tensor(x), rm, rv, training=True, momentum=0.1)
    n = 8 * 4
    mean = x.mean(axis=(0, 2))
    var_unbiased = x.var(axis=(0, 2)) * n / (n - 1)
    np.testing.assert_allclose(rm, 0.1 * mean)
    np.testing.assert_allclose(rv, 0.9 + 0.1 * var_unbiased)


def test_rng_state_round_trip() -> None:
    lm.manual_seed(7)
    state = lm.get_rng_state()
    a = F.dropout(lm.tensor(np.ones(100)), 0.5).array
    lm.set_rng_state(state)
    b = F.dropout(lm.tensor(np.ones(100)), 0.5).array
    np.testing.assert_array_equal(a, b)


def test_cross_entropy_is_stable_for_huge_logits() -> None:
    x = lm.tensor(np.array([[1000.0, -1000.0], [0.0, 5000.0]]), requires_grad=True)
    loss = F.cross_entropy(x, np.array([0, 0]))
    loss.backward()
    assert np.isfinite(loss.item()) and np.isclose(loss.item(), 2500.0)
    assert np.isfinite(x.grad).all()
