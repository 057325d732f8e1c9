"""autograd.functional and lamina.func against PyTorch's: the same functions give the same
Jacobians, products, gradients, Hessians, mapped results and functional calls; results
taken with create_graph=True differentiate further as PyTorch's do."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")
# torch.func's forward mode loads TorchScript, which warns about itself
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")

rng = np.random.default_rng(0)
X, Y, V = rng.standard_normal((3, 2)), rng.standard_normal(2), rng.standard_normal((3, 2))


def _f(lib):
    return lambda x, y: ((x * y).tanh() + x.sin(), (x @ y).exp())


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(),
                               rtol=1e-10, atol=1e-12)


CALLS = {
    "jacobian, tuples": lambda lib: lib.autograd.functional.jacobian(
        _f(lib), (lib.tensor(X), lib.tensor(Y))),
    "jacobian, one in one out": lambda lib: lib.autograd.functional.jacobian(
        lambda x: x.exp() * 2, lib.tensor(X)),
    "vjp": lambda lib: lib.autograd.functional.vjp(
        lambda x: (x ** 2).sum(1), lib.tensor(X), lib.tensor(Y.repeat(2)[:3])),
    "vjp scalar": lambda lib: lib.autograd.functional.vjp(lambda x: x.sum(), lib.tensor(X)),
    "jvp": lambda lib: lib.autograd.functional.jvp(
        lambda x: x.sin() * 3, lib.tensor(X), lib.tensor(V)),
    "func.grad": lambda lib: lib.func.grad(lambda x, y: (x.exp() * y).sum(), argnums=(0, 1))(
        lib.tensor(X), lib.tensor(Y)),
    "func.grad_and_value aux": lambda lib: lib.func.grad_and_value(
        lambda x: ((x ** 3).sum(), x.mean()), has_aux=True)(lib.tensor(X)),
    "func.jacrev": lambda lib: lib.func.jacrev(lambda x: x.cumsum(0))(lib.tensor(Y)),
    "func.jacfwd": lambda lib: lib.func.jacfwd(lambda x: x.softmax(0))(lib.tensor(Y)),
    "func.vjp": lambda lib: lib.func.vjp(lambda x: x.tanh(), lib.tensor(X))[1](lib.tensor(V)),
    "func.jvp": lambda lib: lib.func.jvp(lambda x: x.tanh(), (lib.tensor(X),), (lib.tensor(V),)),
    "func.vmap": lambda lib: lib.func.vmap(lambda r, y: (r * y).sum())(lib.tensor(X),
                                                                       lib.tensor(X)),
    "func.vmap in_dims": lambda lib: lib.func.vmap(lambda c, y: c @ y, in_dims=(1, None))(
        lib.tensor(X.T.copy()), lib.tensor(Y)),
    "func.vmap tuple out": lambda lib: lib.func.vmap(lambda r: (r.max(), r.min()),
                                                     out_dims=(0, 0))(lib.tensor(X)),
    "hessian": lambda lib: lib.autograd.functional.hessian(
        lambda x: (x.sin() * x[0, 0] + x.tanh() ** 2).sum(), lib.tensor(X)),
    "hessian, tuples": lambda lib: lib.autograd.functional.hessian(
        lambda x, y: ((x @ y).exp() * y[0]).sum(), (lib.tensor(X), lib.tensor(Y))),
    "hvp": lambda lib: lib.autograd.functional.hvp(
        lambda x: (x.exp() * x.cos()).sum(), lib.tensor(X), lib.tensor(V)),
    "vhp, tuples": lambda lib: lib.autograd.functional.vhp(
        lambda x, y: (x.sigmoid() @ y.tanh()).sum(), (lib.tensor(X), lib.tensor(Y)),
        (lib.tensor(V), lib.tensor(Y))),
    "func.hessian": lambda lib: lib.func.hessian(
        lambda x: (x.log_softmax(0) * x).sum())(lib.tensor(Y)),
    "func.grad of grad": lambda lib: lib.func.grad(
        lambda x: lib.func.grad(lambda z: (z ** 3 * z.sin()).sum())(x).cos().sum())(
        lib.tensor(X)),
    "func.jacrev of jacrev": lambda lib: lib.func.jacrev(lib.func.jacrev(
        lambda x: x.softmax(0)))(lib.tensor(Y)),
}


@pytest.mark.parametrize("name", CALLS)
def test_the_transform_gives_pytorchs_result(name):
    _same(CALLS[name](lm), CALLS[name](torch))


def test_functional_call_gives_pytorchs_output_and_gradients():
    results = []
    for lib in (torch, lm):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
        params = {k: lib.tensor(np.linspace(-1, 1, v.numel()).reshape(tuple(v.shape)),
                                requires_grad=True)
                  for k, v in model.state_dict().items()}
        out = lib.func.functional_call(model.double() if lib is torch else model.to("float64"),
                                       params, (lib.tensor(X),))
        out.sum().backward()
        results.append((out, [params[k].grad for k in sorted(params)]))
        assert model[0].weight.grad is None  # the module's own parameters untouched
    _same(results[1][0], results[0][0])
    _same(results[1][1], results[0][1])


def test_create_graph_results_differentiate_further_as_pytorchs():
    results = []
    for lib in (torch, lm):
        x = lib.tensor(X, requires_grad=True)
        _, g = lib.autograd.functional.vjp(lambda z: z.tanh() * z, x, lib.tensor(V),
                                           create_graph=True)
        h = lib.autograd.functional.hessian(lambda z: (z ** 3).sum(), x, create_graph=True)
        _, p = lib.autograd.functional.hvp(lambda z: (z.sin() ** 2).sum(), x, lib.tensor(V),
                                           create_graph=True)
        j = lib.autograd.functional.jacobian(lambda z: z.exp(), x, create_graph=True)
        (g.sum() + (h * h).sum() + p.sum() + j.sum()).backward()
        results.append(x.grad)
    _same(results[1], results[0])


def test_a_maml_step_through_func_grad_matches_pytorch():
    """func.grad inside an outer backward: the argument's graph is kept, as torch.func's."""
    results = []
    for lib in (torch, lm):
        w, v = lib.tensor(X, requires_grad=True), lib.tensor(V)
        inner = lib.func.grad(lambda p, v=v: ((v @ p.T).tanh() ** 2).sum())(w)
        fast = w - 0.3 * inner
        ((lib.tensor(X) @ fast.T).sin().sum()).backward()
        results.append(w.grad)
    _same(results[1], results[0])


def test_jvp_by_two_backward_passes_matches_pytorch_with_create_graph_and_without():
    """J v from two vector-Jacobian products (create_graph=True differentiates it further),
    and through an op with no differentiable backward (svdvals) by the Jacobian's rows."""
    results = []
    for lib in (torch, lm):
        x = lib.tensor(X, requires_grad=True)
        out, p = lib.autograd.functional.jvp(lambda a: ((a.tanh() @ a.T).exp(), a.sum(1)), x,
                                             lib.tensor(V), create_graph=True)
        (p[0].sum() + (p[1] ** 2).sum()).backward()
        _, q = lib.autograd.functional.jvp(lambda a, lib=lib: lib.linalg.svdvals(a) * a.sum(),
                                           lib.tensor(X), lib.tensor(V))
        results.append([*out, *p, x.grad, q])
    _same(results[1], results[0])
    with pytest.raises(NotImplementedError, match="double backward through Svdvals"):
        lm.autograd.functional.jvp(lambda a: lm.linalg.svdvals(a), lm.tensor(X),
                                   lm.tensor(V), create_graph=True)


def test_an_ensemble_by_stack_module_state_vmap_and_functional_call_matches_pytorch():
    """torch.func's model-ensembling recipe: stacked parameters and buffers mapped by
    vmap over dicts, each model's slice run by functional_call; outputs and the stacked
    parameters' gradients equal PyTorch's."""
    results, states = [], []
    for lib in (torch, lm):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4),
                                    lib.nn.Linear(4, 2)).double().eval() for _ in range(3)]
        if lib is lm:
            for m, state in zip(models, states):
                m.load_state_dict({k: lm.tensor(v) for k, v in state.items()})
        else:
            states = [{k: v.detach().numpy() for k, v in m.state_dict().items()}
                      for m in models]
        params, buffers = lib.func.stack_module_state(models)
        assert sorted(params) == ["0.bias", "0.weight", "1.bias", "1.weight", "2.bias",
                                  "2.weight"]
        assert params["0.weight"].requires_grad and params["0.weight"].is_leaf

        def wrapper(p, b, x, models=models, lib=lib):
            return lib.func.functional_call(models[0], (p, b), (x,))
        data = lib.tensor(np.linspace(-1, 1, 15).reshape(5, 3))
        y = lib.func.vmap(wrapper, (0, 0, None))(params, buffers, data)
        (y ** 2).sum().backward()
        results.append([y] + [params[k].grad for k in sorted(params)])
    _same(results[1], results[0])


def test_per_sample_gradients_of_a_parameter_dict_match_pytorchs():
    """torch.func's recipe: grad over a dict of parameters through functional_call, and
    vmap of that grad over the batch, giving a dict of per-sample gradients."""
    results = []
    for lib in (lm, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(),
                                  lib.nn.Linear(4, 2)).to(lib.float64)
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))
                                   * (i + 1)))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = lib.tensor(np.linspace(-2, 2, 15).reshape(5, 3))

        def loss(p, xi, model=model, lib=lib):
            return (lib.func.functional_call(model, p, (xi.unsqueeze(0),)) ** 2).sum()
        whole = lib.func.grad(loss)(params, x[0])
        per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, x)
        both, value = lib.func.grad_and_value(loss, argnums=(0, 1))(params, x[1])
        results.append([whole[k].numpy() for k in sorted(whole)]
                       + [per_sample[k].numpy() for k in sorted(per_sample)]
                       + [both[0]["2.bias"].numpy(), both[1].numpy(), value.numpy()])
    assert len(results[0]) == len(results[1]) == 11
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="argument 0 holds a str"):
        lm.func.grad(lambda p: p["w"].sum())({"w": lm.ones(2), "name": "x"})
