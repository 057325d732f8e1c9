"""The in-place shape ops and the post-accumulate-grad hook, against PyTorch: gradients
through ops that read a tensor before it changed shape, and an optimizer step taken
inside backward."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def _both(fn):
    a = np.random.default_rng(0).standard_normal((3, 4))
    out = []
    for lib in (torch, lm):
        x = lib.tensor(a, requires_grad=True)
        fn(lib, x).backward()
        out.append(np.asarray(x.grad.numpy()))
    return out


@pytest.mark.parametrize("op", ["unsqueeze_(0)", "t_()", "transpose_(0, 1)", "squeeze_()",
                                "swapdims_(0, 1)"])
def test_ops_that_read_the_tensor_before_it_changed_shape_get_the_old_shape(op):
    def fn(lib, x):
        a = x * 1
        before = (a * 2).sum()  # reads a as it was
        eval(f"a.{op}")  # noqa: S307 - the test's own ops
        return before + (a * a).sum() * 3

    ours, theirs = _both(fn)[1], _both(fn)[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_an_optimizer_step_inside_backward_matches_pytorchs():
    a = np.random.default_rng(1).standard_normal((4, 3))
    results = []
    for lib in (torch, lm):
        w = lib.tensor(a, requires_grad=True)
        calls = []

        def step(t, calls=calls, lib=lib):
            calls.append(t.grad.clone())
            with lib.no_grad():
                t.sub_(0.1 * t.grad)
            t.grad = None

        w.register_post_accumulate_grad_hook(step)
        for _ in range(3):
            (w * w).sum().backward()
        results.append((w.detach().numpy().copy(), len(calls)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    assert results[1][1] == results[0][1] == 3


def test_the_hook_handle_removes_it_and_only_a_leaf_takes_one():
    w = lm.tensor([1.0], requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    (w * 2).sum().backward()
    handle.remove()
    (w * 2).sum().backward()
    assert seen == [1]
    with pytest.raises(RuntimeError, match="leaf that requires grad"):
        (w * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_apply_and_resize_refuse_a_tensor_that_requires_grad():
    w = lm.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="apply_"):
        w.apply_(lambda v: v)
    with pytest.raises(RuntimeError, match="resize_"):
        w.resize_(2)
