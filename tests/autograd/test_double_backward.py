"""create_graph=True: gradients that are differentiated again, op by op against PyTorch
(the same function, the same float64 inputs, the gradient of a weighted sum of the first
gradient), against float64 central differences of the first gradient, and in the
programs that need it (a WGAN-GP gradient penalty, MAML's second-order step)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(0)


def _x(*shape: int, low: float = -1.5, high: float = 1.5) -> np.ndarray:
    return RNG.uniform(low, high, shape)


# (name, function of (module, functional module, *tensors), input arrays): each function
# is written once, the same line for lamina and PyTorch.
CASES = [
    ("add broadcast", lambda t, f, a, b: (a + b) * a, [_x(3, 4), _x(4)]),
    ("sub", lambda t, f, a, b: (a - b) ** 2, [_x(3, 4), _x(3, 1)]),
    ("mul", lambda t, f, a, b: a * b * a, [_x(3, 4), _x(1, 4)]),
    ("div", lambda t, f, a, b: a / b, [_x(3, 4), _x(3, 4, low=0.5, high=2)]),
    ("pow tensor", lambda t, f, a, b: a ** b, [_x(3, 4, low=0.5, high=2), _x(3, 4)]),
    ("pow scalar", lambda t, f, a: a ** 3 + a ** 2 + a ** 0.5 * 0, [_x(5, low=0.2, high=2)]),
    ("neg exp log sqrt", lambda t, f, a: t.sqrt(t.exp(-a) + a.abs()) + t.log(a * a + 1),
     [_x(6)]),
    ("maximum minimum", lambda t, f, a, b: t.maximum(a, b) * t.minimum(a, b) * a,
     [_x(6), _x(6)]),
    ("where", lambda t, f, a, b: t.where(a > 0, a * b, b * b * a), [_x(6), _x(6)]),
    ("clamp", lambda t, f, a: t.clamp(a, -0.5, 0.7) * a, [_x(8)]),
    ("matmul 2-D", lambda t, f, a, b: t.tanh(a @ b), [_x(3, 4), _x(4, 5)]),
    ("matmul batched", lambda t, f, a, b: t.sigmoid(a @ b), [_x(2, 3, 4), _x(4, 2)]),
    ("matmul broadcast batch", lambda t, f, a, b: t.sin(a @ b), [_x(2, 3, 4), _x(1, 4, 2)]),
    ("matmul vectors", lambda t, f, a, b: t.sin(a @ b) * (b.t() @ a),
     [_x(4), _x(4, 3)]),
    ("sum mean", lambda t, f, a: (a * a).sum(1) * a.mean(0)[:1] + a.sum(), [_x(3, 4)]),
    ("amax", lambda t, f, a: a.amax(1) * a.sum(1), [_x(3, 4)]),
    ("norm", lambda t, f, a: a.norm(2, dim=1) ** 3, [_x(3, 4)]),
    ("unary table", lambda t, f, a: (t.sin(a) * t.cos(a) + t.log1p(a * a) + t.atan(a)
                                     + t.expm1(a) + t.erf(a) + t.rsqrt(a * a + 1)
                                     + t.reciprocal(a + 3) + t.tan(a * 0.3) + t.sinh(a)
                                     + t.asinh(a) + t.square(a)), [_x(6)]),
    ("activations", lambda t, f, a: (f.relu(a) * a + f.leaky_relu(a, 0.2) * a + f.elu(a) * a
                                     + f.silu(a) + f.softplus(a) + f.gelu(a)
                                     + f.gelu(a, approximate="tanh")), [_x(9)]),
    ("softmax", lambda t, f, a: f.softmax(a, dim=1) * a, [_x(3, 5)]),
    ("log_softmax", lambda t, f, a: f.log_softmax(a, dim=0) * a, [_x(3, 5)]),
    ("linear", lambda t, f, a, w, b: t.tanh(f.linear(a, w, b)),
     [_x(2, 3, 4), _x(5, 4), _x(5)]),
    ("shape ops", lambda t, f, a: (t.cat([a, a.t().reshape(3, 4) * 2]).view(-1)[::2]
                                   * t.stack([a[0], a[1] ** 2]).flatten().repeat(2)[:12]
                                   ) * a.flatten()[t.tensor([0, 1, 1, 5, 2, 3, 4, 7, 8, 9,
                                                             10, 11])],
     [_x(3, 4)]),
    ("pad expand", lambda t, f, a: f.pad(a, (1, 2)) * f.pad(a, (1, 2)).sum()
     + a.unsqueeze(0).expand(2, 3, 4).sum(0).tril().sum(), [_x(3, 4)]),
    ("cross_entropy", lambda t, f, a: f.cross_entropy(a * a, t.tensor([0, 2, 1])),
     [_x(3, 4)]),
    ("cross_entropy options", lambda t, f, a: f.cross_entropy(
        a * a, t.tensor([0, 2, 1]), weight=t.tensor([1.0, 2.0, 0.5, 1.0], dtype=t.float64),
        label_smoothing=0.1, ignore_index=1), [_x(3, 4)]),
    ("cross_entropy none 3-D", lambda t, f, a: f.cross_entropy(
        t.sin(a), t.tensor([[0, 2], [1, 1]]), reduction="none") * a[:, 0, :], [_x(2, 3, 2)]),
    ("conv2d", lambda t, f, a, w, b: t.tanh(f.conv2d(a, w, b, stride=2, padding=1)),
     [_x(2, 2, 5, 5), _x(3, 2, 3, 3), _x(3)]),
    ("conv2d groups dilation", lambda t, f, a, w: f.conv2d(a, w, dilation=2, groups=2) ** 2,
     [_x(1, 4, 6, 5), _x(2, 2, 2, 2)]),
    ("conv1d pools", lambda t, f, a, w: f.avg_pool1d(f.conv1d(a, w, padding=1), 2) ** 2
     + f.adaptive_avg_pool2d(a.unsqueeze(1), (2, 3)).sum() * a.sum(), [_x(2, 2, 6), _x(3, 2, 3)]),
    ("max pools", lambda t, f, a: (f.max_pool2d(a, 2) ** 2).sum() * a
     + f.max_pool2d(a, 3, 2, 1).sum() * a
     + f.max_pool1d(a[0], 2, 1).sum(), [_x(2, 2, 4, 4)]),
    ("batch_norm", lambda t, f, a, w, b: f.batch_norm(a * a, None, None, w, b, training=True)
     ** 3, [_x(4, 3, 2), _x(3), _x(3)]),
    ("batch_norm eval", lambda t, f, a, w: f.batch_norm(
        a * a, t.tensor([0.1, -0.2, 0.3], dtype=t.float64),
        t.tensor([0.5, 1.5, 2.0], dtype=t.float64), w, training=False) ** 2, [_x(4, 3), _x(3)]),
    ("attention", lambda t, f, q, k, v: f.scaled_dot_product_attention(q, k, v, is_causal=True)
     * q, [_x(2, 3, 4), _x(2, 3, 4), _x(2, 3, 4)]),
    ("embedding", lambda t, f, w: f.embedding(t.tensor([[0, 2], [2, 3]]), w).tanh(),
     [_x(4, 3)]),
    ("logsumexp cumsum", lambda t, f, a: t.logsumexp(a * a, 1) * a.cumsum(1)[:, -1]
     + t.logsumexp(a, (0, 1), keepdim=True) ** 2, [_x(3, 4)]),
    ("conv_transpose2d", lambda t, f, a, w, b: f.conv_transpose2d(
        a, w, b, stride=2, padding=1, output_padding=1).sin(),
     [_x(2, 2, 3, 3), _x(2, 3, 3, 3), _x(3)]),
    ("conv_transpose groups 1-D", lambda t, f, a, w: f.conv_transpose1d(
        a, w, stride=2, groups=2, dilation=2) ** 2, [_x(1, 4, 5), _x(4, 1, 3)]),
    ("interpolate", lambda t, f, a: (f.interpolate(a, scale_factor=2, mode="bilinear") ** 2
                                     ).sum() * a
     + f.interpolate(a, size=(5, 3), mode="nearest").sum() * a, [_x(1, 2, 3, 3)]),
    ("einsum", lambda t, f, a, b: t.einsum("bij,jk->bik", a, b).tanh()
     * t.einsum("bij,bij->b", a, a).unsqueeze(1).unsqueeze(2), [_x(2, 3, 4), _x(4, 2)]),
    ("scatter index_add", lambda t, f, a, s: (a.scatter(1, t.tensor([[0, 2], [1, 0]]), s)
                                              .index_add(0, t.tensor([1, 0]), a * a)
                                              .index_fill(1, t.tensor([3]), 0.5)
                                              .repeat_interleave(2, 0)) ** 2,
     [_x(2, 4), _x(2, 2)]),
    ("atan2 fmod polygamma", lambda t, f, a, b: t.atan2(a, b) * a + t.fmod(a * 3, b) * b
     + t.remainder(a * 5, b) ** 2 + t.polygamma(1, b + 2) * a, [_x(6), _x(6, low=0.5, high=2)]),
    ("inv det slogdet solve", lambda t, f, a, b: t.linalg.inv(a) * t.linalg.det(a)
     + t.linalg.slogdet(a)[1] * a + t.linalg.solve(a, b) @ b.T,
     [_x(3, 3) + 3 * np.eye(3), _x(3, 2)]),
    ("prod cumprod", lambda t, f, a: a.prod(1) * a.sum(1) + a.cumprod(0).sin().sum(1)
     + a.prod(), [_x(3, 4)]),
    ("prod with zeros", lambda t, f, a: (a * t.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]],
                                                      dtype=t.float64)).prod(1).sum() * a
     + (a * t.tensor([1.0, 0.0, 1.0], dtype=t.float64)).cumprod(1) ** 2, [_x(2, 3)]),
    ("p-norms", lambda t, f, a: t.linalg.vector_norm(a, 3, dim=1) ** 2 * a[:, 0]
     + t.linalg.vector_norm(a, 1.5) * a.sum(1) + t.norm(a, p=0.5, dim=0).sum(), [_x(3, 4)]),
    ("fractional_max_pool2d", lambda t, f, a: f.fractional_max_pool2d(
        a * a, 2, output_size=3, _random_samples=t.tensor([[[0.3, 0.8]]], dtype=t.float64))
     .sum() * a, [_x(1, 1, 5, 5)]),
    ("max_pool3d logcumsumexp", lambda t, f, a: f.max_pool3d(a, 2, 1).sum() * a
     + t.logcumsumexp(a * a, 2) ** 2, [_x(1, 2, 3, 3, 3)]),
    ("nll mse", lambda t, f, a: f.nll_loss(f.log_softmax(a, 1), t.tensor([1, 0, 3]))
     + f.mse_loss(a * a, t.ones_like(a)), [_x(3, 4)]),
]


def _second(module, fn, arrays):
    """(first gradients, gradients of sum(first gradient * weights)) of fn's output summed
    with fixed weights."""
    xs = [module.tensor(a, requires_grad=True) for a in arrays]
    y = fn(module, TF if module is torch else F, *xs)
    w = module.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
    gs = module.autograd.grad((y * w).sum(), xs, create_graph=True)
    v = [module.tensor(np.cos(np.arange(g.numel())).reshape(tuple(g.shape))) for g in gs]
    total = sum((g * vv).sum() for g, vv in zip(gs, v))
    hs = module.autograd.grad(total, xs, allow_unused=True)
    return ([g.detach().numpy() for g in gs],
            [np.zeros(a.shape) if h is None else h.numpy() for h, a in zip(hs, arrays)])


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_second_derivatives_equal_pytorchs(name, fn, arrays):
    g, h = _second(lm, fn, arrays)
    gt, ht = _second(torch, fn, arrays)
    for a, b in zip(g, gt):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(h, ht):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


# The cases small enough to difference element by element.
SMALL = [c for c in CASES if c[0] not in {"matmul broadcast batch", "matmul vectors",
                                          "sum mean", "amax", "shape ops", "pad expand",
                                          "cross_entropy none 3-D", "conv2d groups dilation",
                                          "conv1d pools", "conv_transpose groups 1-D",
                                          "interpolate"}]


@pytest.mark.parametrize("name,fn,arrays", SMALL, ids=[c[0] for c in SMALL])
def test_second_derivatives_match_central_differences(name, fn, arrays):
    """The gradient of sum(first gradient * v) is the first gradient's directional
    derivative transposed: checked element by element by central differences of the
    first gradient itself, in float64."""
    _, h = _second(lm, fn, arrays)
    eps = 1e-6

    def first_dot_v(values):
        g, _ = _second_first_only(fn, values)
        return sum((gi * np.cos(np.arange(gi.size)).reshape(gi.shape)).sum() for gi in g)

    for k, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up = [b.copy() for b in arrays]
            down = [b.copy() for b in arrays]
            up[k][idx] += eps
            down[k][idx] -= eps
            numeric[idx] = (first_dot_v(up) - first_dot_v(down)) / (2 * eps)
        np.testing.assert_allclose(h[k], numeric, rtol=1e-5, atol=1e-6)


def _second_first_only(fn, arrays):
    xs = [lm.tensor(a, requires_grad=True) for a in arrays]
    y = fn(lm, F, *xs)
    w = lm.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
    return [g.numpy() for g in lm.autograd.grad((y * w).sum(), xs)], None


def test_third_derivative():
    x = lm.tensor([0.3, -1.2, 2.0], dtype=lm.float64, requires_grad=True)
    (g1,) = lm.autograd.grad((x ** 4 + x.sin()).sum(), x, create_graph=True)
    (g2,) = lm.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = lm.autograd.grad(g2.sum(), x)
    a = x.detach().numpy()
    np.testing.assert_allclose(g2.detach().numpy(), 12 * a ** 2 - np.sin(a), rtol=1e-12)
    np.testing.assert_allclose(g3.numpy(), 24 * a - np.cos(a), rtol=1e-12)


def test_backward_create_graph_keeps_the_gradient_graph():
    """backward(create_graph=True): .grad has a grad_fn; a second backward accumulates
    into it out of place, as PyTorch's does."""
    for module in (lm, torch):
        x = module.tensor([1.0, 2.0, 3.0], dtype=module.float64, requires_grad=True)
        with pytest.warns(UserWarning, match="reference cycle between the parameter"):
            (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad and x.grad.grad_fn is not None
        x.grad.sum().backward()  # d/dx sum(3 x^2) = 6 x, added to 3 x^2
        got = x.grad.detach().numpy()
        np.testing.assert_allclose(got, 3 * np.array([1, 4, 9.0]) + 6 * np.array([1, 2, 3.0]))


def _critic(module):
    nn = module.nn
    return nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.Tanh(),
                         nn.LayerNorm(16), nn.Linear(16, 1)).double()


def test_wgan_gp_gradient_penalty_matches_pytorch():
    lm.manual_seed(3)
    critic, critic_t = _critic(lm), _critic(torch)
    critic_t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in
                              critic.state_dict().items()})
    real, fake, alpha = _x(8, 4), _x(8, 4), RNG.uniform(0, 1, (8, 1))
    results = []
    for module, net in ((lm, critic), (torch, critic_t)):
        mixed = module.tensor(alpha * real + (1 - alpha) * fake, requires_grad=True)
        score = net(mixed)
        (g,) = module.autograd.grad(score, mixed, grad_outputs=module.ones_like(score),
                                    create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean() * 10
        (score.mean() + penalty).backward()
        results.append((penalty.item(), {n: p.grad.numpy() for n, p in
                                         net.named_parameters() if p.grad is not None}))
    (p, grads), (pt, grads_t) = results
    assert p == pytest.approx(pt, rel=1e-12)
    assert grads.keys() == grads_t.keys()
    for name in grads:
        np.testing.assert_allclose(grads[name], grads_t[name], rtol=1e-9, atol=1e-12)


def test_maml_second_order_step_matches_pytorch():
    """One inner SGD step with create_graph=True, the query loss differentiated through
    it back to the initial weights."""
    lm.manual_seed(5)
    net = lm.nn.Sequential(lm.nn.Linear(3, 8), lm.nn.Tanh(), lm.nn.Linear(8, 4)).double()
    net_t = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 4)).double()
    net_t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    xs, ys = _x(6, 3), np.array([0, 1, 2, 3, 1, 0])
    xq, yq = _x(5, 3), np.array([3, 2, 1, 0, 0])
    out = []
    for module, model, f in ((lm, net, F), (torch, net_t, TF)):
        params = dict(model.named_parameters())
        support = module.func.functional_call(model, params, (module.tensor(xs),))
        grads = module.autograd.grad(f.cross_entropy(support, module.tensor(ys)),
                                     list(params.values()), create_graph=True)
        fast = {n: p - 0.4 * g for (n, p), g in zip(params.items(), grads)}
        query = module.func.functional_call(model, fast, (module.tensor(xq),))
        f.cross_entropy(query, module.tensor(yq)).backward()
        out.append([p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_maml_on_a_conv_net_with_batch_norm_and_max_pooling_matches_pytorch():
    """MAML's Omniglot-style network (conv, batch norm in training mode, ReLU, 2x2 max
    pooling), float32 as trained: its second-order step against PyTorch's."""
    out, state = [], {}
    lm.manual_seed(1)
    x, y = RNG.standard_normal((5, 1, 8, 8)).astype(np.float32), np.array([0, 1, 2, 0, 1])
    for module, f in ((lm, F), (torch, TF)):
        nn = module.nn
        net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 3))
        if module is torch:
            net.load_state_dict({k: torch.tensor(v.numpy()) for k, v in state.items()})
        else:
            state.update(net.state_dict())
        params = dict(net.named_parameters())
        loss = f.cross_entropy(module.func.functional_call(net, params, (module.tensor(x),)),
                               module.tensor(y))
        grads = module.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {n: p - 0.5 * g for (n, p), g in zip(params.items(), grads)}
        query = module.func.functional_call(net, fast, (module.tensor(x[::-1].copy()),))
        f.cross_entropy(query, module.tensor(y)).backward()
        out.append([p.grad.numpy() for p in net.parameters()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-6)


def _layer(module, name):
    nn = module.nn
    if name == "transformer":
        return nn.Sequential(nn.Embedding(7, 8), nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, batch_first=True), nn.Linear(8, 7)).double()
    return nn.Sequential(nn.ConvTranspose2d(3, 4, 3, stride=2), nn.InstanceNorm2d(4, affine=True),
                         nn.GELU(), nn.Upsample(scale_factor=2, mode="bilinear"),
                         nn.Conv2d(4, 2, 3)).double()


@pytest.mark.parametrize("name", ["transformer", "generator"])
def test_a_gradient_norm_penalty_on_whole_networks_matches_pytorch(name):
    """Every parameter's gradient of sum(|dL/dp|^2): the second derivative through every
    op of a transformer layer (embedding, attention, layer norm, feed-forward) and of a
    generator (transposed convolution, instance norm, GELU, upsampling)."""
    lm.manual_seed(2)
    net, net_t = _layer(lm, name), _layer(torch, name)
    net_t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    x = (np.array([[1, 4, 2, 6, 0], [3, 3, 5, 1, 2]]) if name == "transformer"
         else _x(2, 3, 3, 3))
    out = []
    from torch.nn.attention import SDPBackend, sdpa_kernel

    for module, model in ((lm, net), (torch, net_t)):
        params = list(model.parameters())
        # PyTorch's CPU flash attention has no double backward; its math kernel has.
        with sdpa_kernel(SDPBackend.MATH):
            loss = (model(module.tensor(x)) ** 2).mean()
            grads = module.autograd.grad(loss, params, create_graph=True)
            sum((g * g).sum() for g in grads).backward()
        out.append([p.grad.numpy() for p in params])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("drop", [
    lambda x: F.dropout(x, 0.3), lambda x: F.dropout2d(x, 0.3),
    lambda x: F.alpha_dropout(x, 0.3, True), lambda x: F.feature_alpha_dropout(x, 0.3, True),
    lambda x: F.rrelu(x, training=True)], ids=["dropout", "dropout2d", "alpha_dropout",
                                                 "feature_alpha_dropout", "rrelu"])
def test_random_ops_differentiate_through_their_own_draws(drop):
    """y = x * m (+ a constant) for the m drawn in forward: the second derivative of
    sum(y ** 2) along v is 2 m^2 v, not a new draw's."""
    lm.manual_seed(0)
    x = lm.tensor(_x(4, 5, 6), requires_grad=True)
    y = drop(x)
    (m,) = lm.autograd.grad(y.sum(), x, retain_graph=True)
    (g,) = lm.autograd.grad((y ** 2).sum(), x, create_graph=True)
    v = np.cos(np.arange(x.numel())).reshape(tuple(x.shape))
    (h,) = lm.autograd.grad((g * lm.tensor(v)).sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * m.numpy() ** 2 * v, rtol=1e-12)
    assert len(np.unique(m.numpy())) > 1  # something was drawn


def test_an_op_without_a_rule_gives_the_first_gradient_and_names_itself_on_the_second():
    a = _x(3, 3) + 3 * np.eye(3)
    x = lm.tensor(a, requires_grad=True)
    (g,) = lm.autograd.grad(lm.linalg.svdvals(x).sum(), x, create_graph=True)
    xt = torch.tensor(a, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.linalg.svdvals(xt).sum(), xt)
    np.testing.assert_allclose(g.detach().numpy(), gt.numpy(), rtol=1e-10)
    assert g.requires_grad
    with pytest.raises(NotImplementedError, match="double backward through Svdvals"):
        g.sum().backward()


def test_hooks_see_recorded_gradients_under_create_graph():
    x = lm.tensor([1.0, 2.0], dtype=lm.float64, requires_grad=True)
    y = x ** 2
    seen = []
    y.register_hook(lambda g: seen.append(g.requires_grad) or g * 3)
    (g,) = lm.autograd.grad(y.sum(), x, create_graph=True)
    assert seen == [False]  # the seed gradient of y is a constant
    np.testing.assert_allclose(g.detach().numpy(), [6.0, 12.0])
    (h,) = lm.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [6.0, 6.0])


def test_float32_second_derivative_stays_float32():
    x = lm.tensor([0.5, 1.5], requires_grad=True)
    (g,) = lm.autograd.grad(F.gelu(x).sum(), x, create_graph=True)
    (h,) = lm.autograd.grad(g.sum(), x)
    assert g.dtype == lm.float32 and h.dtype == lm.float32
    xt = torch.tensor([0.5, 1.5], requires_grad=True)
    (gt,) = torch.autograd.grad(TF.gelu(xt).sum(), xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-5)


def _custom_functions(module):
    class Exp(module.autograd.Function):  # saves its output: the graph must run through it
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, gy):
            (y,) = ctx.saved_tensors
            return gy * y

    class ScaledSquare(module.autograd.Function):  # the newer form, a non-tensor argument
        @staticmethod
        def forward(x, k):
            return k * x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * ctx.k * x * g, None

    return Exp, ScaledSquare


def test_custom_functions_differentiate_twice_as_pytorchs():
    results = []
    for module in (lm, torch):
        exp, square = _custom_functions(module)
        x = module.tensor([0.3, -0.7, 1.1], dtype=module.float64, requires_grad=True)
        y = (exp.apply(x * 2) * square.apply(x, 1.5)).sum()
        (g,) = module.autograd.grad(y, x, create_graph=True)
        (h,) = module.autograd.grad((g * g).sum(), x)
        results.append((g.detach().numpy(), h.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_custom_backward_runs_in_grad_mode_only_under_create_graph_as_pytorchs():
    seen: dict[str, list[bool]] = {"lamina": [], "torch": []}

    def twice(module):
        class Twice(module.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                seen[module.__name__].append(module.is_grad_enabled())
                return g * 2
        return Twice

    for module in (lm, torch):
        Twice = twice(module)  # noqa: N806 - a class

        x = module.ones(2, requires_grad=True)
        Twice.apply(x).sum().backward()
        module.autograd.grad(Twice.apply(x).sum(), x)
        module.autograd.grad(Twice.apply(x).sum(), x, create_graph=True)
    assert seen == {"lamina": [False, False, True], "torch": [False, False, True]}


def test_once_differentiable_raises_pytorchs_error_on_the_second_derivative():
    messages = []
    for module in (lm, torch):
        class Cube(module.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            @module.autograd.function.once_differentiable
            def backward(ctx, g):
                return 3 * ctx.saved_tensors[0] ** 2 * g

        x = module.tensor([2.0], dtype=module.float64, requires_grad=True)
        (g,) = module.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        assert g.item() == 12.0 and not g.requires_grad  # a constant seed: no graph at all
        seed = module.ones(1, dtype=module.float64, requires_grad=True)
        (g,) = module.autograd.grad(Cube.apply(x), x, seed, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError) as err:
            g.sum().backward()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_gradgradcheck_passes_right_rules_and_catches_a_wrong_one():
    assert lm.autograd.gradgradcheck(lambda x, w: F.conv2d(x, w, padding=1).tanh(),
                                     (lm.randn(1, 2, 4, 4), lm.randn(3, 2, 3, 3)))
    assert torch.autograd.gradgradcheck(lambda x: x.sin() * x,
                                        torch.tensor([0.5, 2.0], dtype=torch.float64,
                                                     requires_grad=True))

    class Wrong(lm.autograd.Function):  # right first derivative, second derivative 0
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x.detach()  # x detached: its own gradient is lost

    assert lm.autograd.gradcheck(Wrong.apply, lm.tensor([0.5, 2.0]))
    assert not lm.autograd.gradgradcheck(Wrong.apply, lm.tensor([0.5, 2.0]),
                                         raise_exception=False)
    with pytest.raises(lm.GradcheckError, match="analytic"):
        lm.autograd.gradgradcheck(Wrong.apply, lm.tensor([0.5, 2.0]))


@pytest.mark.parametrize("kind,layers", [("LSTM", 1), ("LSTM", 2), ("GRU", 1), ("GRU", 2),
                                         ("LSTMCell", 1), ("GRUCell", 1)])
def test_recurrent_layers_differentiate_twice_as_pytorchs(kind, layers):
    """A gradient penalty on the input of nn.LSTM / nn.GRU (their fused sequence ops,
    nn.LSTM's x-gates overwritten in place by its op) and of the cells."""
    x0, out, state = _x(2, 5, 3), [], {}
    for module in (torch, lm):
        module.manual_seed(0)
        cls = getattr(module.nn, kind)
        net = (cls(3, 4) if "Cell" in kind else
               cls(3, 4, num_layers=layers, batch_first=True)).double()
        if module is lm:
            net.load_state_dict({k: lm.tensor(v) for k, v in state.items()})
        else:
            state.update({k: v.detach().numpy() for k, v in net.state_dict().items()})
        x = module.tensor(x0[:, 0] if "Cell" in kind else x0, requires_grad=True)
        y = net(x)
        y = y[0] if isinstance(y, tuple) else y
        (g,) = module.autograd.grad((y ** 2).sum(), x, create_graph=True)
        (g * g).sum().backward()
        out.append([g.detach().numpy(), x.grad.numpy()] + [p.grad.numpy()
                                                           for p in net.parameters()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_the_fused_sequence_functions_pass_gradgradcheck():
    h0, c0 = lm.tensor(_x(2, 3)), lm.tensor(_x(2, 3))
    assert lm.autograd.gradgradcheck(
        lambda xg, w: F.lstm_sequence(xg, h0, c0, w)[0], (lm.tensor(_x(4, 2, 12)),
                                                           lm.tensor(_x(12, 3))))
    assert lm.autograd.gradgradcheck(
        lambda xg, w, b: F.gru_sequence(xg, h0, w, b)[1],
        (lm.tensor(_x(4, 2, 9)), lm.tensor(_x(9, 3)), lm.tensor(_x(9))))


def test_standardize_differentiates_twice():
    mean, std = np.array([0.5, -1.0, 2.0]), np.array([2.0, 0.5, 4.0])
    x = lm.tensor(_x(4, 3), requires_grad=True)
    (g,) = lm.autograd.grad((F.standardize(x, mean, std) ** 2).sum(), x, create_graph=True)
    v = np.cos(np.arange(12)).reshape(4, 3)
    (h,) = lm.autograd.grad((g * lm.tensor(v)).sum(), x)
    np.testing.assert_allclose(h.numpy(), 2 * v / std ** 2, rtol=1e-12)
